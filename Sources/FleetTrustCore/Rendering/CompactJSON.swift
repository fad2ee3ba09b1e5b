import Foundation

/// Compact JSON written straight into bytes, exactly as `ScanDocumentLayout.encoder()` (Foundation's
/// `JSONEncoder`, keys sorted, slashes unescaped) writes the same values: strings escape `"`, `\`
/// and the C0 controls (`\b \f \n \r \t`, else `\u00xx` in lower-case hex) and nothing else; a
/// `Double` is its `description` without a trailing `.0`; object keys come in the order the caller
/// gives, which the report types sort once by their UTF-8 bytes, as the encoder sorts them.
///
/// Why: the encoder builds a boxed tree per value and sorts every object's keys each time; for a
/// host line that was most of the scan's own CPU after the probes. `ScanReportLineTests` holds
/// this writer to the encoder's bytes over hostile values.
struct CompactJSON {
    private(set) var bytes: [UInt8] = []
    private var comma = false

    /// A non-finite `Double`: the encoder refuses it (with its own error), so the caller lets it.
    struct NonFiniteNumber: Error {}

    init() {
        bytes.reserveCapacity(4096)
    }

    /// Empties the buffer, keeping its capacity (one writer serves every host line).
    mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        comma = false
    }

    /// A key as written before its value: `"name":`.
    static func key(_ name: String) -> [UInt8] {
        var json = CompactJSON()
        json.string(name)
        return json.bytes + [UInt8(ascii: ":")]
    }

    /// The object keys of `keys` in the encoder's order (UTF-8 bytes), each with its written form.
    static func sortedKeys<Key: CodingKey>(_ keys: [Key]) -> [(key: Key, json: [UInt8])] {
        sortedKeys(keys, name: \.stringValue)
    }

    static func sortedKeys<Key>(_ keys: [Key], name: (Key) -> String) -> [(key: Key, json: [UInt8])] {
        keys.sorted { name($0).utf8.lexicographicallyPrecedes(name($1).utf8) }.map { ($0, key(name($0))) }
    }

    private mutating func separate() {
        if comma { bytes.append(UInt8(ascii: ",")) }
    }

    mutating func field(_ key: [UInt8]) {
        separate()
        bytes.append(contentsOf: key)
        comma = false
    }

    /// One object whose members are `keys` in their sorted order, each value written by `value`.
    mutating func object<Key>(_ keys: [(key: Key, json: [UInt8])],
                              _ value: (inout CompactJSON, Key) throws -> Void) rethrows {
        beginObject()
        for (key, name) in keys {
            field(name)
            try value(&self, key)
        }
        endObject()
    }

    mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        comma = false
    }

    mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        comma = true
    }

    mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        comma = false
    }

    mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        comma = true
    }

    private mutating func literal(_ text: StaticString) {
        separate()
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
        comma = true
    }

    mutating func null() { literal("null") }

    mutating func bool(_ value: Bool) { value ? literal("true") : literal("false") }

    mutating func integer<Integer: BinaryInteger>(_ value: Integer) {
        separate()
        bytes.append(contentsOf: value.description.utf8)
        comma = true
    }

    mutating func double(_ value: Double) throws {
        guard value.isFinite else { throw NonFiniteNumber() }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        separate()
        bytes.append(contentsOf: text.utf8)
        comma = true
    }

    mutating func string(_ text: String) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var start = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                escape(byte)
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
        comma = true
    }

    private mutating func escape(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0c: bytes.append(UInt8(ascii: "f"))
        case 0x0a: bytes.append(UInt8(ascii: "n"))
        case 0x0d: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        default:
            let hex = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xf)]])
        }
    }

    mutating func strings(_ values: [String]) {
        beginArray()
        for value in values { string(value) }
        endArray()
    }

    mutating func rawValues<Value: RawRepresentable>(_ values: [Value]) where Value.RawValue == String {
        beginArray()
        for value in values { string(value.rawValue) }
        endArray()
    }

    /// `value`, or `null` when absent.
    mutating func optional<Value>(_ value: Value?, _ write: (inout CompactJSON, Value) throws -> Void) rethrows {
        guard let value else { return null() }
        try write(&self, value)
    }

    /// A value this writer does not spell out (rare shapes: TLS sessions, algorithm lists, commands),
    /// encoded by the encoder itself and spliced in: compact JSON is the same wherever a value sits.
    mutating func encoded<Value: Encodable>(_ value: Value) throws {
        let json = try ScanDocumentLayout.encoder().encode(value)
        separate()
        bytes.append(contentsOf: json)
        comma = true
    }
}
