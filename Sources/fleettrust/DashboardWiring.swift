import FleetTrustCore
import FleetTrustDashboard
import Foundation

/// Runs the dashboard on a thread of its own: curses wants a single thread, and a blocking UI loop
/// must not occupy one of Swift's few cooperative threads.
enum DashboardThread {
    static func run(state: DashboardState, services: DashboardServices, theme: Theme, noColor: Bool) async -> DashboardDriver.Ending {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                let terminal = CursesTerminal(theme: theme, noColor: noColor)
                let ending = DashboardDriver(state: state, services: services, terminal: terminal).run()
                continuation.resume(returning: ending)
            }
            thread.name = "fleettrust-ui"
            thread.start()
        }
    }
}

/// Performs confirmed decisions. Until the trust engine's safe writer is wired in, only `trust`
/// is supported, by appending one known_hosts line per key.
enum DashboardWrites {
    struct Unsupported: Error, CustomStringConvertible {
        var kind: Decision.Kind
        var description: String { "\(kind.rawValue) is not available in this build yet" }
    }

    @Sendable static func perform(_ decision: Decision) throws -> String {
        guard decision.kind == .trust else { throw Unsupported(kind: decision.kind) }
        var byFile: [String: String] = [:]
        for item in decision.items {
            for key in item.keys { byFile[item.file, default: ""] += item.names.joined(separator: ",") + " " + key.openSSHLine + "\n" }
        }
        for (file, text) in byFile {
            let fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: file]) }
            defer { close(fd) }
            let bytes = Array(text.utf8)
            guard write(fd, bytes, bytes.count) == bytes.count else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file]) }
        }
        let count = decision.items.count
        return "Trusted \(count) host\(count == 1 ? "" : "s"); entries appended to \(byFile.keys.sorted().joined(separator: ", "))."
    }
}
