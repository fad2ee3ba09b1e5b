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

/// Performs confirmed decisions through the trust engine's safe writers: each host's edit is one
/// guarded write (locked, atomic), refused when the file no longer records for the host exactly
/// what the person was shown when deciding.
struct DashboardWrites: Sendable {
    /// Write new names hashed, as `HashKnownHosts` says.
    var hashNames: Bool

    @Sendable func perform(_ decision: Decision) throws -> String {
        for item in decision.items {
            switch decision.kind {
            case .trust, .replace:
                let removing = decision.kind == .replace ? Set(item.previous.map(\.fingerprint)) : []
                let seen = Self.seen(item, in: item.file)
                let kept = Set(seen).subtracting(removing)
                try KnownHostsWriter(path: item.file, hashNames: item.host.sshOptions.hashKnownHosts ?? hashNames)
                    .update(names: item.names, removing: removing,
                            adding: item.keys.filter { !kept.contains($0.sha256Fingerprint) }, expecting: seen)
            case .forget:
                for file in Set(item.previous.map(\.location.file)).sorted() {
                    let seen = Self.seen(item, in: file)
                    try KnownHostsWriter(path: file, hashNames: hashNames)
                        .update(names: item.names, removing: Set(seen), adding: [], expecting: seen)
                }
            case .pin:
                try PinFileWriter(path: item.file).addPin(patterns: item.names.joined(separator: ","),
                                                          fingerprints: item.keys.map(\.sha256Fingerprint) + item.spkiPins.map { "pin-sha256:" + $0 },
                                                          expecting: PinFileWriter.Expectation(names: item.names, pinned: item.shownPins,
                                                                                               spki: !item.spkiPins.isEmpty))
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

    /// The fingerprints recorded for the host in `file` when the person decided.
    private static func seen(_ item: DecisionItem, in file: String) -> [String] {
        item.seen.filter { $0.location.file == file }.map(\.fingerprint)
    }
}
