import Foundation

/// Where the parts of a recorded scan document are, found without decoding it: its `version`
/// and the byte range of each entry of its `hosts` array, so `ScanReplay` can decode one host
/// at a time. Values it does not need are skipped, checked only as far as finding their end
/// needs (strings and nesting); each host entry is then decoded, and so checked, in full.
struct ReplayDocument {
    let version: Int
    let hosts: [Range<Int>]
    /// The document's `generated_at`, when it is a string.
    let generatedAt: String?

    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    /// Nesting deeper than this is refused (a hostile file must not exhaust anything).
    static let maximumDepth = 512

    init(_ data: Data) throws {
        let found: (version: Int?, hosts: [Range<Int>]?, generatedAt: Range<Int>?) = try data.withUnsafeBytes { raw in
            var scanner = Scanner(bytes: raw.bindMemory(to: UInt8.self), base: data.startIndex)
            return try scanner.topLevel()
        }
        guard let hosts = found.hosts else { throw Malformed(description: "missing .hosts") }
        guard let version = found.version else { throw Malformed(description: "missing .version") }
        self.version = version
        self.hosts = hosts
        generatedAt = found.generatedAt.flatMap { try? JSONDecoder().decode(String.self, from: data[$0]) }
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        let base: Int
        var at = 0

        init(bytes: UnsafeBufferPointer<UInt8>, base: Int) {
            self.bytes = bytes
            self.base = base
        }

        mutating func topLevel() throws -> (version: Int?, hosts: [Range<Int>]?, generatedAt: Range<Int>?) {
            var version: Int?, hosts: [Range<Int>]?, generatedAt: Range<Int>?
            skipBlanks()
            try members { scanner, key in
                switch String(decoding: scanner.bytes[key], as: UTF8.self) {
                case "hosts":
                    guard scanner.peek == UInt8(ascii: "[") else { throw Malformed(description: "wrong type at .hosts") }
                    var ranges: [Range<Int>] = []
                    try scanner.elements { scanner in
                        let start = scanner.at
                        try scanner.skipValue(depth: 3)
                        ranges.append((scanner.base + start)..<(scanner.base + scanner.at))
                    }
                    hosts = ranges
                case "version":
                    let start = scanner.at
                    try scanner.skipValue(depth: 2)
                    version = Int(String(decoding: scanner.bytes[start..<scanner.at], as: UTF8.self))
                    if version == nil { throw Malformed(description: "wrong type at .version") }
                case "generated_at":
                    let start = scanner.at
                    try scanner.skipValue(depth: 2)
                    generatedAt = (scanner.base + start)..<(scanner.base + scanner.at)
                default:
                    try scanner.skipValue(depth: 2)
                }
            }
            skipBlanks()
            guard at == bytes.count else { throw Malformed(description: "invalid JSON: data after the document") }
            return (version, hosts, generatedAt)
        }

        /// An object, from its `{` to after its `}`: `value` gets each member's key (the range
        /// inside its quotes) with the scanner at the member's value, and steps over the value.
        mutating func members(_ value: (inout Scanner, Range<Int>) throws -> Void) throws {
            try expect(UInt8(ascii: "{"))
            skipBlanks()
            if peek == UInt8(ascii: "}") { at += 1; return }
            while true {
                skipBlanks()
                let keyStart = at
                try skipString()
                let key = (keyStart + 1)..<(at - 1)
                skipBlanks()
                try expect(UInt8(ascii: ":"))
                skipBlanks()
                try value(&self, key)
                skipBlanks()
                if peek == UInt8(ascii: ",") { at += 1; continue }
                try expect(UInt8(ascii: "}"))
                return
            }
        }

        /// An array, from its `[` to after its `]`: `element` steps over each element.
        mutating func elements(_ element: (inout Scanner) throws -> Void) throws {
            try expect(UInt8(ascii: "["))
            skipBlanks()
            if peek == UInt8(ascii: "]") { at += 1; return }
            while true {
                skipBlanks()
                try element(&self)
                skipBlanks()
                if peek == UInt8(ascii: ",") { at += 1; continue }
                try expect(UInt8(ascii: "]"))
                return
            }
        }

        var peek: UInt8? { at < bytes.count ? bytes[at] : nil }

        /// Steps over `byte`, or says the document is not JSON where it is not there.
        mutating func expect(_ byte: UInt8) throws {
            guard peek == byte else {
                throw Malformed(description: "invalid JSON: '\(Character(Unicode.Scalar(byte)))' expected at byte \(at)")
            }
            at += 1
        }

        mutating func skipBlanks() {
            while let byte = peek, byte == 0x20 || byte == 0x0a || byte == 0x0d || byte == 0x09 { at += 1 }
        }

        /// A string, from its opening quote to after its closing one.
        mutating func skipString() throws {
            try expect(UInt8(ascii: "\""))
            while let byte = peek {
                at += 1
                if byte == UInt8(ascii: "\\") {
                    at += 1
                } else if byte == UInt8(ascii: "\"") {
                    return
                }
            }
            throw Malformed(description: "invalid JSON: a string is not closed")
        }

        /// Any value: a string, an object or array (to its matching end), or a scalar.
        mutating func skipValue(depth: Int) throws {
            guard depth <= ReplayDocument.maximumDepth else { throw Malformed(description: "invalid JSON: nested too deep") }
            guard let byte = peek else { throw Malformed(description: "invalid JSON: the document ends early") }
            switch byte {
            case UInt8(ascii: "\""):
                try skipString()
            case UInt8(ascii: "{"):
                try members { scanner, _ in try scanner.skipValue(depth: depth + 1) }
            case UInt8(ascii: "["):
                try elements { scanner in try scanner.skipValue(depth: depth + 1) }
            default:
                let start = at
                while let next = peek, next != UInt8(ascii: ","), next != UInt8(ascii: "}"), next != UInt8(ascii: "]"),
                      next != 0x20, next != 0x0a, next != 0x0d, next != 0x09 { at += 1 }
                guard at > start else { throw Malformed(description: "invalid JSON near byte \(at)") }
            }
        }
    }
}
