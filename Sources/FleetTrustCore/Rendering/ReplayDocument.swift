import Foundation

/// Where the parts of a recorded scan document are, found without decoding it: its `version`
/// and the byte range of each entry of its `hosts` array, so `ScanReplay` can decode one host
/// at a time. Values it does not need are skipped, checked only as far as finding their end
/// needs (strings and nesting); each host entry is then decoded, and so checked, in full.
struct ReplayDocument {
    let version: Int
    let hosts: [Range<Int>]

    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    /// Nesting deeper than this is refused (a hostile file must not exhaust anything).
    static let maximumDepth = 512

    init(_ data: Data) throws {
        let found: (version: Int?, hosts: [Range<Int>]?) = try data.withUnsafeBytes { raw in
            var scanner = Scanner(bytes: raw.bindMemory(to: UInt8.self), base: data.startIndex)
            return try scanner.topLevel()
        }
        guard let hosts = found.hosts else { throw Malformed(description: "missing .hosts") }
        guard let version = found.version else { throw Malformed(description: "missing .version") }
        self.version = version
        self.hosts = hosts
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        let base: Int
        var at = 0

        init(bytes: UnsafeBufferPointer<UInt8>, base: Int) {
            self.bytes = bytes
            self.base = base
        }

        mutating func topLevel() throws -> (version: Int?, hosts: [Range<Int>]?) {
            var version: Int?, hosts: [Range<Int>]?
            skipBlanks()
            try expect(UInt8(ascii: "{"))
            skipBlanks()
            if peek == UInt8(ascii: "}") {
                at += 1
            } else {
                while true {
                    skipBlanks()
                    let keyStart = at
                    try skipString()
                    let key = String(decoding: bytes[(keyStart + 1)..<(at - 1)], as: UTF8.self)
                    skipBlanks()
                    try expect(UInt8(ascii: ":"))
                    skipBlanks()
                    switch key {
                    case "hosts": hosts = try elements()
                    case "version":
                        let start = at
                        try skipValue(depth: 1)
                        version = Int(String(decoding: bytes[start..<at], as: UTF8.self))
                        if version == nil { throw Malformed(description: "wrong type at .version") }
                    default: try skipValue(depth: 1)
                    }
                    skipBlanks()
                    if peek == UInt8(ascii: ",") { at += 1; continue }
                    try expect(UInt8(ascii: "}"))
                    break
                }
            }
            skipBlanks()
            guard at == bytes.count else { throw Malformed(description: "invalid JSON: data after the document") }
            return (version, hosts)
        }

        /// The byte ranges (in the document's indices) of an array's elements.
        mutating func elements() throws -> [Range<Int>] {
            guard peek == UInt8(ascii: "[") else { throw Malformed(description: "wrong type at .hosts") }
            at += 1
            var ranges: [Range<Int>] = []
            skipBlanks()
            if peek == UInt8(ascii: "]") {
                at += 1
                return ranges
            }
            while true {
                skipBlanks()
                let start = at
                try skipValue(depth: 2)
                ranges.append((base + start)..<(base + at))
                skipBlanks()
                if peek == UInt8(ascii: ",") { at += 1; continue }
                try expect(UInt8(ascii: "]"))
                return ranges
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
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let close = byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                at += 1
                skipBlanks()
                if peek == close { at += 1; return }
                while true {
                    skipBlanks()
                    if close == UInt8(ascii: "}") {
                        try skipString()
                        skipBlanks()
                        try expect(UInt8(ascii: ":"))
                        skipBlanks()
                    }
                    try skipValue(depth: depth + 1)
                    skipBlanks()
                    if peek == UInt8(ascii: ",") { at += 1; continue }
                    try expect(close)
                    return
                }
            default:
                let start = at
                while let next = peek, next != UInt8(ascii: ","), next != UInt8(ascii: "}"), next != UInt8(ascii: "]"),
                      next != 0x20, next != 0x0a, next != 0x0d, next != 0x09 { at += 1 }
                guard at > start else { throw Malformed(description: "invalid JSON near byte \(at)") }
            }
        }
    }
}
