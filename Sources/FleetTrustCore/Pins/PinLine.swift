/// One line of a pin file, split into fields with their byte ranges so that the pin writer
/// can extend a line in place without touching any other byte.
struct PinLine {
    enum Parsed {
        case none
        case pin(Pin)
        case error(PinFileError)
    }

    var bytes: ArraySlice<UInt8>
    /// Byte ranges (in `bytes`' indices) of the whitespace-separated fields.
    var fields: [Range<Int>]

    static let space = UInt8(ascii: " "), tab = UInt8(ascii: "\t"), carriageReturn = UInt8(ascii: "\r")

    /// Splits at `\n`; each line keeps its indices into `bytes` and excludes the `\n` (and a `\r` before it).
    static func split(_ bytes: [UInt8]) -> [PinLine] {
        var lines: [PinLine] = []
        var start = 0
        for i in bytes.indices where bytes[i] == UInt8(ascii: "\n") {
            lines.append(PinLine(bytes[start..<i]))
            start = i + 1
        }
        if start < bytes.count { lines.append(PinLine(bytes[start...])) }
        return lines
    }

    init(_ raw: ArraySlice<UInt8>) {
        var content = raw
        if content.last == Self.carriageReturn { content = content.dropLast() }
        bytes = content
        fields = []
        var i = content.startIndex
        while i < content.endIndex {
            while i < content.endIndex, content[i] == Self.space || content[i] == Self.tab { i += 1 }
            let start = i
            while i < content.endIndex, content[i] != Self.space, content[i] != Self.tab { i += 1 }
            if i > start { fields.append(start..<i) }
        }
    }

    func text(_ field: Range<Int>) -> Substring { Substring(String(decoding: bytes[field], as: UTF8.self)) }

    var isBlankOrComment: Bool { fields.isEmpty || bytes[fields[0].lowerBound] == UInt8(ascii: "#") }

    static func parse(_ line: PinLine, path: String, line number: Int) -> Parsed {
        if line.isBlankOrComment { return .none }
        func failure(_ reason: PinFileError.Reason) -> Parsed { .error(PinFileError(file: path, line: number, reason: reason)) }
        guard String(validating: line.bytes, as: UTF8.self) != nil else { return failure(.notUTF8) }
        guard !line.bytes.contains(where: { ($0 < 0x20 && $0 != tab) || $0 == 0x7f }) else { return failure(.controlCharacter) }
        guard line.fields.count >= 2 else { return failure(.noFingerprint) }
        var fingerprints: [PinFingerprint] = []
        var expires: PinDate?
        for field in line.fields.dropFirst() {
            let text = line.text(field)
            if text.hasPrefix("expires=") {
                guard expires == nil else { return failure(.repeatedExpiry) }
                guard let date = PinDate.parse(text.dropFirst("expires=".count)) else { return failure(.badExpiry(String(text))) }
                expires = date
                continue
            }
            switch PinFingerprint.parse(text) {
            case .success(let fingerprint): if !fingerprints.contains(fingerprint) { fingerprints.append(fingerprint) }
            case .failure(let reason): return failure(reason)
            }
        }
        guard !fingerprints.isEmpty else { return failure(.noFingerprint) }
        return .pin(Pin(patterns: String(line.text(line.fields[0])), fingerprints: fingerprints, expires: expires,
                        file: path, line: number))
    }
}
