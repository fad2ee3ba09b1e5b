import Foundation

/// The scan document's layout (version 3), so it can be written and read line by line: `{`, then
/// the top-level fields in sorted key order, each on its own line as `  "key" : <compact json>,`,
/// except `hosts`, written as `  "hosts" : [`, then one host per line as compact JSON with sorted
/// keys (a `,` ends every host line but the last), then `  ],`. It is plain JSON: a reader that
/// ignores the layout reads the same document.
///
/// `generated_at` is the only field that sorts before `hosts`; every other field (the summary
/// counted while the hosts went by, the shared keys) comes after, so hosts are written as they
/// are judged and never held.
public enum ScanDocumentLayout {
    /// Compact (no line break anywhere: strings escape theirs), keys sorted, slashes unescaped.
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// `{`, the `generated_at` line and the line opening `hosts`.
    public static func head(generatedAt: String, encoder: JSONEncoder) throws -> Data {
        Data("{\n".utf8) + (try field("generated_at", Data(try encoder.encode(generatedAt)), last: false))
            + Data("  \"hosts\" : [\n".utf8)
    }

    /// What goes before a host line: nothing for the first, the previous line's `,` and line break after.
    public static func beforeHost(_ index: Int) -> Data { index == 0 ? Data() : Data(",\n".utf8) }

    /// The end of `hosts` (after `count` host lines), then `fields` (compact values, keys after
    /// `hosts`) sorted, and the closing brace.
    public static func tail(hosts count: Int, fields: [(key: String, value: Data)]) throws -> Data {
        var out = Data((count == 0 ? "  ],\n" : "\n  ],\n").utf8)
        let sorted = fields.sorted { $0.key < $1.key }
        for (index, field) in sorted.enumerated() {
            out += try self.field(field.key, field.value, last: index == sorted.count - 1)
        }
        return out + Data("}\n".utf8)
    }

    private static func field(_ key: String, _ value: Data, last: Bool) throws -> Data {
        Data("  ".utf8) + (try JSONEncoder().encode(key)) + Data(" : ".utf8) + value + Data((last ? "\n" : ",\n").utf8)
    }
}
