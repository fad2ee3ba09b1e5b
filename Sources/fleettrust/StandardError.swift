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
