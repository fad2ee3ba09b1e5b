import Foundation

/// Every JSON document fleettrust prints, encoded one way: pretty-printed, keys sorted, slashes
/// unescaped, snake_case keys as each type declares them, and an empty array or object written
/// `[]` / `{}` (Foundation's encoder writes them over three lines).
public enum ReportJSON {
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    public static func encode<T: Encodable>(_ value: T, with encoder: JSONEncoder = ReportJSON.encoder()) throws -> Data {
        compactingEmptyContainers(try encoder.encode(value))
    }

    /// `[` or `{`, a line break, blank lines and indentation, then its closer, become `[]` / `{}`.
    /// JSON strings hold no raw line break, so such a run is never inside a value.
    static func compactingEmptyContainers(_ json: Data) -> Data {
        let bytes = [UInt8](json)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            out.append(byte)
            index += 1
            guard byte == UInt8(ascii: "[") || byte == UInt8(ascii: "{"), index < bytes.count, bytes[index] == UInt8(ascii: "\n") else {
                continue
            }
            var look = index
            while look < bytes.count, bytes[look] == UInt8(ascii: "\n") || bytes[look] == UInt8(ascii: " ") { look += 1 }
            let closer = byte == UInt8(ascii: "[") ? UInt8(ascii: "]") : UInt8(ascii: "}")
            if look < bytes.count, bytes[look] == closer {
                out.append(closer)
                index = look + 1
            }
        }
        return Data(out)
    }
}
