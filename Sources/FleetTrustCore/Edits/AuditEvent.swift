import Foundation

/// What happened to a trust store (or which connection was started), typed, so that the
/// dashboard, `sync` and `tidy --fix` describe their writes with one vocabulary and the audit
/// log's line format (`AuditLog.Record`) is decided in one place, `record`.
public struct AuditEvent: Sendable, Equatable {
    /// Who asked for the change, and what it was.
    public enum Action: Sendable, Equatable {
        /// A decision confirmed in the dashboard, written to `file`.
        case decided(Decision, file: String)
        /// The dashboard removed the lines of a host that was in alarm (`changed`, `revoked`, …)
        /// from `file`: not routine clean-up, since what the host presents can be trusted next.
        case forgotInAlarm(status: String, file: String)
        /// `fleettrust sync` added proved keys to `file`; `proof` says what proved them.
        case synced(proof: String, file: String)
        /// `fleettrust tidy --fix` removed a line of `file` for a finding of this kind.
        case tidied(finding: String, file: String)
        /// The dashboard started this connection command.
        case connected(command: [String])
    }

    /// The dashboard's decisions, as the audit log names them.
    public enum Decision: String, Sendable, Equatable, CaseIterable {
        case trust, replace, pin, forget
    }

    /// Whether the change was made. Written as `saved` / `not saved: WHY` (`removed` /
    /// `not removed: WHY` for tidy); a connection's outcome is its own sentence.
    public enum Outcome: Sendable, Equatable {
        case written
        case refused(String)
        case finished(String)
    }

    public var time: Date
    public var user: String
    public var action: Action
    /// The inventory host concerned; nil for a tidied line, which belongs to no one host.
    public var host: InventoryHost?
    public var names: [String]
    public var oldFingerprints: [String]
    public var newFingerprints: [String]
    /// The superseded or removed lines (`FILE:LINE: TEXT`), kept so the change can be undone.
    public var oldEntries: [String]
    public var outcome: Outcome
    /// Where the keys come from when no connection of this machine proved them (replay: `the
    /// recording FILE, scanned from SCANNER`); the record's method says so.
    public var provenance: String?

    public init(time: Date, user: String, action: Action, host: InventoryHost?, names: [String] = [],
                oldFingerprints: [String] = [], newFingerprints: [String] = [], oldEntries: [String] = [], outcome: Outcome) {
        self.time = time
        self.user = user
        self.action = action
        self.host = host
        self.names = names
        self.oldFingerprints = oldFingerprints
        self.newFingerprints = newFingerprints
        self.oldEntries = oldEntries
        self.outcome = outcome
    }

    /// The line the audit log keeps (format unchanged since the log was the dashboard's alone).
    public var record: AuditLog.Record {
        let action: String, written: String, done: String, undone: String
        // Absolute, so a record still says which file when read from another directory.
        let absolute = { (file: String) in
            file.hasPrefix("/") ? file : URL(fileURLWithPath: file).standardizedFileURL.path
        }
        switch self.action.withAbsoluteFile(absolute) {
        case .decided(let decision, let file):
            (action, written, done, undone) = (decision.rawValue, "dashboard \(decision.rawValue) -> \(file)", "saved", "not saved")
        case .forgotInAlarm(let status, let file):
            (action, written, done, undone) = ("forget-\(status)", "dashboard forget of a \(status) host -> \(file)", "saved", "not saved")
        case .synced(let proof, let file):
            (action, written, done, undone) = ("sync", "sync (\(proof)) -> \(file)", "saved", "not saved")
        case .tidied(let finding, let file):
            (action, written, done, undone) = ("tidy", "tidy --fix \(finding) -> \(file)", "removed", "not removed")
        case .connected(let command):
            (action, written, done, undone) = ("connect", command.joined(separator: " "), "connected", "not connected")
        }
        let method = written + (provenance.map { " (keys from \($0), not proved from this machine)" } ?? "")
        let outcome: String
        switch self.outcome {
        case .written: outcome = done
        case .refused(let why): outcome = "\(undone): \(why)"
        case .finished(let sentence): outcome = sentence
        }
        return AuditLog.Record(time: AuditLog.timestamp(time), user: user, action: action, host: host?.name ?? "",
                               endpoint: host?.endpointLabel ?? "", names: names, oldFingerprints: oldFingerprints,
                               newFingerprints: newFingerprints, method: method, outcome: outcome, oldEntries: oldEntries)
    }
}

extension AuditEvent.Action {
    /// The same action with its file made absolute by `absolute`.
    func withAbsoluteFile(_ absolute: (String) -> String) -> Self {
        switch self {
        case .decided(let decision, let file): return .decided(decision, file: absolute(file))
        case .forgotInAlarm(let status, let file): return .forgotInAlarm(status: status, file: absolute(file))
        case .synced(let proof, let file): return .synced(proof: proof, file: absolute(file))
        case .tidied(let finding, let file): return .tidied(finding: finding, file: absolute(file))
        case .connected: return self
        }
    }
}

extension AuditLog {
    /// Appends the events' records, all or none (see `append(_: [Record])`).
    public func append(_ events: [AuditEvent]) throws {
        try append(events.map(\.record))
    }
}
