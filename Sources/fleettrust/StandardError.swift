import Foundation
import FleetTrustCore

/// A message on standard error, each of its lines (every bad line of a pin file, say) a line of
/// its own, prefixed with the program name and cleaned of control characters.
func printError(_ message: String) {
    let lines = message.split(separator: "\n", omittingEmptySubsequences: true).prefix(1_000)
    let text = lines.map { "fleettrust: \(Sanitizer.clean(String($0), limit: 2048))\n" }.joined()
    FileHandle.standardError.write(Data((text.isEmpty ? "fleettrust: \n" : text).utf8))
}

/// Failures that end a command with a documented exit status and one clear sentence.
enum CommandFailure: Error, CustomStringConvertible {
    /// Bad usage or input that cannot be read: exit 64.
    case unreadableInput(String)

    var description: String {
        switch self {
        case .unreadableInput(let message): return message
        }
    }
}

/// Whether standard error is a terminal (progress lines are shown only then).
var standardErrorIsTerminal: Bool { isatty(2) == 1 }

/// Where to look after a usage error: the `See 'fleettrust scan --help'` pointer that
/// argument-parser puts under its usage block, kept in parentheses on the error's own line.
enum UsageHint {
    static func from(_ fullMessage: String) -> String {
        guard let line = fullMessage.split(whereSeparator: \.isNewline).first(where: { $0.contains("--help'") }),
              let start = line.firstIndex(of: "'"), let end = line.lastIndex(of: "'"), start < end else {
            return " (see 'fleettrust --help')"
        }
        return " (see \(line[start...end]))"
    }
}

extension StringProtocol {
    func trimmingWhitespaceOnBothSides() -> String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
