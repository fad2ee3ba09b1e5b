/// The lines of a known_hosts file as a collection over the file's one buffer.
///
/// A 200,000-line file must fit in little memory, so a file keeps its bytes once and where each
/// line starts; a line's value (its raw bytes and what OpenSSH reads in it) is made when it is
/// asked for, by the same parser that indexed it, so it always says what the index said.
public struct KnownHostsLineList: RandomAccessCollection, Sendable {
    let bytes: [UInt8]
    /// Offset of each line's first byte in `bytes`.
    let starts: [UInt32]

    public var startIndex: Int { 0 }
    public var endIndex: Int { starts.count }

    /// The line at `index` (0-based; its `number` is `index + 1`).
    public subscript(index: Int) -> KnownHostsLine {
        let raw = self.raw(at: index)
        return KnownHostsLine(number: index + 1, raw: raw, content: KnownHostsParser.parseLine(raw))
    }

    /// The bytes of the line at `index` without its `\n`, without parsing it.
    public func raw(at index: Int) -> [UInt8] { Array(bytes[range(at: index)]) }

    func range(at index: Int) -> Range<Int> {
        let start = Int(starts[index])
        let end = index + 1 < starts.count ? Int(starts[index + 1]) - 1 : (bytes.last == 0x0a ? bytes.count - 1 : bytes.count)
        return start..<end
    }

    /// Where every line starts: one per `\n`, and one more for a last line without it.
    static func lineStarts(_ bytes: [UInt8]) -> [UInt32] {
        var starts: [UInt32] = []
        var start = 0
        bytes.withUnsafeBufferPointer { buffer in
            starts.reserveCapacity(buffer.reduce(1) { $1 == 0x0a ? $0 + 1 : $0 })
            while start < buffer.count {
                starts.append(UInt32(start))
                guard let end = buffer[start...].firstIndex(of: 0x0a) else { break }
                start = end + 1
            }
        }
        return starts
    }
}
