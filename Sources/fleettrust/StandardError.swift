import Foundation
import FleetTrustCore

/// One line on standard error, prefixed with the program name and cleaned of control characters.
func printError(_ message: String) {
    FileHandle.standardError.write(Data("fleettrust: \(Sanitizer.clean(message, limit: 2048))\n".utf8))
}

/// Whether standard error is a terminal (progress lines are shown only then).
var standardErrorIsTerminal: Bool { isatty(2) == 1 }
