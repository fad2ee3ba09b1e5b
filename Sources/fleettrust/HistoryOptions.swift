import ArgumentParser
import Foundation
import FleetTrustCore

/// Where the history store is and whether it is used, for `scan`, the dashboard, `tidy` and `sync` (which only reads it).
struct HistoryOptions: ParsableArguments {
    @OptionGroup var file: HistoryFileOption

    @Flag(name: .customLong("no-history"), help: "Neither read nor record the history: no drift is judged.")
    var noHistory = false

    var path: String { file.path }

    func validateHistory() throws {
        if noHistory && file.given != nil { throw ValidationError("--no-history and --history contradict each other") }
    }

    /// The store, opened on a thread of its own; nil with `--no-history`, or read-only when no file
    /// exists yet. A file that is not a fleettrust history is exit 64, in one sentence.
    func open(readOnly: Bool) async throws -> HistoryStore? {
        guard !noHistory else { return nil }
        let path = path
        do { return try await OffPool.run { try HistoryStore.open(path: path, readOnly: readOnly) } } catch {
            throw CommandFailure.unreadableInput("\(error)")
        }
    }

    /// What the history remembers of these hosts: nil with `--no-history` (no drift); empty
    /// when no file exists yet (every host's first scan).
    func remembered(_ store: HistoryStore?, hosts: [InventoryHost]) async throws -> FleetHistory? {
        guard !noHistory else { return nil }
        guard let store else { return FleetHistory() }
        do { return try await OffPool.run { try store.history(for: hosts) } } catch {
            throw CommandFailure.unreadableInput("\(error)")
        }
    }
}
