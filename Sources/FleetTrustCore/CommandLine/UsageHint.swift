import Foundation

/// Where to look after a usage error: the `See 'fleettrust scan --help'` pointer that
/// argument-parser puts under its usage block, kept in parentheses on the error's own line.
public enum UsageHint {
    public static func from(_ fullMessage: String) -> String {
        guard let line = fullMessage.split(whereSeparator: \.isNewline).first(where: { $0.contains("--help'") }),
              let start = line.firstIndex(of: "'"), let end = line.lastIndex(of: "'"), start < end else {
            return " (see 'fleettrust --help')"
        }
        return " (see \(line[start...end]))"
    }
}

extension StringProtocol {
    /// The text without leading and trailing white space (Foundation's trimming works on `String` only).
    public func trimmingWhitespaceOnBothSides() -> String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
