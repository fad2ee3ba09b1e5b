/// Text from outside the program (a server, an input file, an inventory) after it has been made
/// safe to show: no control characters, no bidirectional overrides, valid UTF-8, bounded length.
///
/// It is made once, where the text enters (a probe result, a parsed file, an inventory host), so a
/// renderer never needs to remember to clean anything: every untrusted field of a `JudgedHost` is
/// a `CleanText`, and its `value` is safe for a terminal, a log line or JSON.
public struct CleanText: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    public let value: String

    /// Cleans `untrusted` to one line of at most `limit` characters (longer text ends in `…`).
    public init(_ untrusted: String, limit: Int = 256) {
        value = Sanitizer.clean(untrusted, limit: limit)
    }

    /// Cleans untrusted bytes (invalid UTF-8 becomes U+FFFD).
    public init(bytes: [UInt8], limit: Int = 256) {
        value = Sanitizer.clean(bytes: bytes, limit: limit)
    }

    /// Cleans text that may span lines: each line is cleaned on its own and the line breaks kept,
    /// so a multi-line message (every bad line of a pin file) still reads as lines.
    public init(multiline untrusted: String, lineLimit: Int = 400, maxLines: Int = 50) {
        let lines = untrusted.split(separator: "\n", omittingEmptySubsequences: false)
        var kept = lines.prefix(maxLines).map { Sanitizer.clean(String($0), limit: lineLimit) }
        if lines.count > maxLines { kept.append("… \(lines.count - maxLines) more lines") }
        value = kept.joined(separator: "\n")
    }

    /// The lines of a multi-line text (a one-line text is one line).
    public var lines: [String] { value.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }

    public var description: String { value }
    public var isEmpty: Bool { value.isEmpty }

    public init(from decoder: Decoder) throws {
        value = Sanitizer.clean(try decoder.singleValueContainer().decode(String.self), limit: 4096)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }

    public static func < (a: CleanText, b: CleanText) -> Bool { a.value < b.value }
}
