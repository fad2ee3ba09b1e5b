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

/// Performs confirmed decisions through the trust engine's safe writers (locked, atomic,
/// refusing when the lines for a host changed since they were shown).
enum DashboardWrites {
    @Sendable static func perform(_ decision: Decision) throws -> String {
        for item in decision.items {
            switch decision.kind {
            case .trust:
                let writer = KnownHostsWriter(path: item.file, hashNames: false)
                for key in item.keys { try writer.add(key, for: item.names) }
            case .replace:
                let writer = KnownHostsWriter(path: item.file, hashNames: false)
                try writer.remove(names: item.names)
                for key in item.keys { try writer.add(key, for: item.names) }
            case .forget:
                for file in Set(item.previous.map(\.location.file)).sorted() {
                    try KnownHostsWriter(path: file, hashNames: false).remove(names: item.names)
                }
            case .pin:
                try PinFileWriter(path: item.file).addPin(patterns: item.names.joined(separator: ","),
                                                          fingerprints: item.keys.map(\.sha256Fingerprint))
            }
        }
        let hosts = decision.items.map(\.host.name).joined(separator: ", ")
        let files = Set(decision.items.map(\.file) + decision.items.flatMap { $0.previous.map(\.location.file) })
            .sorted().joined(separator: ", ")
        switch decision.kind {
        case .trust: return "Trusted \(hosts); entries appended to \(files)."
        case .replace: return "Replaced the key of \(hosts) in \(files); the old entry is in the audit log."
        case .forget: return "Forgot \(hosts): its entries were removed from \(files)."
        case .pin: return "Pinned the keys of \(hosts) in \(files)."
        }
    }
}
