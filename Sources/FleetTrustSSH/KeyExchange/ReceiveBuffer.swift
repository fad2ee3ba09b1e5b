/// The bytes a server has sent that the key exchange has not consumed yet.
///
/// Whoever reads the socket (a thread blocked in `poll`, or an event loop woken by epoll)
/// appends here; the parsers take whole lines and whole packets out, and return nil while one
/// is still incomplete, so a parse can be tried again when more bytes arrive without anything
/// being consumed twice. Sizes stay bounded by the parsers' limits.
struct ReceiveBuffer {
    private var bytes: [UInt8] = []
    private var start = 0
    /// Every byte the server has sent so far, so callers can bound what a peer makes us read.
    private(set) var total = 0

    var count: Int { bytes.count - start }

    mutating func append(_ chunk: UnsafeBufferPointer<UInt8>) {
        if start > 0 && start == bytes.count {
            bytes.removeAll(keepingCapacity: true)
            start = 0
        }
        bytes.append(contentsOf: chunk)
        total += chunk.count
    }

    mutating func append(_ chunk: [UInt8]) {
        chunk.withUnsafeBufferPointer { append($0) }
    }

    /// The start of what was received but not consumed, to quote a peer that sent no line end.
    func unread(upTo limit: Int) -> [UInt8] { Array(bytes[start..<min(bytes.count, start + limit)]) }

    enum LineFailure: Error { case tooLong }

    /// One whole line without its CR LF, nil while its end has not arrived; a line longer than
    /// `limit` bytes is an error, not a wait.
    mutating func takeLine(limit: Int) throws(LineFailure) -> [UInt8]? {
        guard let newline = bytes[start...].firstIndex(of: 0x0a) else {
            if count >= limit { throw .tooLong }
            return nil
        }
        guard newline - start < limit else { throw .tooLong }
        var end = newline
        if end > start && bytes[end - 1] == 0x0d { end -= 1 }
        let line = Array(bytes[start..<end])
        consume(newline + 1 - start)
        return line
    }

    /// `count` bytes from the front without consuming them; nil while fewer have arrived.
    func peek(_ count: Int) -> ArraySlice<UInt8>? {
        self.count >= count ? bytes[start..<start + count] : nil
    }

    /// Drops `count` bytes from the front, returning the `kept` ones in the middle.
    mutating func take(_ range: Range<Int>, of count: Int) -> [UInt8] {
        let taken = Array(bytes[start + range.lowerBound..<start + range.upperBound])
        consume(count)
        return taken
    }

    private mutating func consume(_ count: Int) {
        start += count
        if start == bytes.count {
            bytes.removeAll(keepingCapacity: true)
            start = 0
        } else if start >= 4096 && start * 2 >= bytes.count {
            bytes.removeFirst(start)
            start = 0
        }
    }
}
