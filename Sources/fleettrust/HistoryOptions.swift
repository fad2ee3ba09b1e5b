import ArgumentParser
import Foundation
import FleetTrustCore

/// Where the history store is, for `scan`, the dashboard and `history`.
struct HistoryOptions: ParsableArguments {
    @Option(name: .customLong("history"), help: ArgumentHelp(
        "The history database (SQLite) that remembers every key each host presented, for drift. "
            + "Default: $XDG_STATE_HOME/fleettrust/history.sqlite, else ~/.local/state/fleettrust/history.sqlite.",
        valueName: "file"))
    var historyPath: String?

    @Flag(name: .customLong("no-history"), help: "Neither read nor record the history: no drift is judged.")
    var noHistory = false

    /// The store's path, `~` expanded.
    var path: String {
        expandTilde(historyPath ?? HistoryStore.defaultPath(environment: ProcessInfo.processInfo.environment))
    }

    /// What the history remembers of these hosts: nil with `--no-history` (no drift); empty
    /// when no file exists yet (every host's first scan).
    func remembered(_ store: HistoryStore?, hosts: [InventoryHost]) async throws -> FleetHistory? {
        guard !noHistory else { return nil }
        guard let store else { return FleetHistory() }
        let names = hosts.map(\.name)
        do {
            return try await OffPool.run { try store.history(for: names) }
        } catch {
            throw CommandFailure.unreadableInput("\(error)")
        }
    }

    func validateHistory() throws {
        if noHistory && historyPath != nil { throw ValidationError("--no-history and --history contradict each other") }
    }

    /// The store, opened on a thread of its own; nil with `--no-history`, or read-only when no file
    /// exists yet. A file that is not a fleettrust history is exit 64, in one sentence.
    func open(readOnly: Bool) async throws -> HistoryStore? {
        guard !noHistory else { return nil }
        let path = path
        do {
            return try await OffPool.run { try HistoryStore.open(path: path, readOnly: readOnly) }
        } catch {
            throw CommandFailure.unreadableInput("\(error)")
        }
    }
}

/// Runs blocking work (SQLite calls, which wait on locks) on a thread of its own, never on
/// Swift's cooperative pool.
enum OffPool {
    static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                do { continuation.resume(returning: try work()) } catch { continuation.resume(throwing: error) }
            }
            thread.name = "fleettrust-history"
            thread.start()
        }
    }
}
