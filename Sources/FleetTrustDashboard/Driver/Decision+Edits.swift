import FleetTrustCore
import Foundation

/// A confirmed decision as the trust-store edits that carry it out and the audit events that
/// record it: the dashboard writes through the same `TrustStoreEditor` and `AuditLog` as `sync`
/// and `tidy --fix`.
extension Decision {
    /// The edits, each compare-and-set against what the person was shown when deciding.
    public var edits: [TrustEdit] {
        items.flatMap { item -> [TrustEdit] in
            let hashNames = item.host.sshOptions.hashKnownHosts
            switch kind {
            case .trust:
                return [TrustEdit(path: item.file, change: .add(names: item.names, keys: item.keys, expecting: Self.seen(item, in: item.file)),
                                  hashNames: hashNames)]
            case .replace:
                return [TrustEdit(path: item.file, change: .replace(names: item.names, removing: Set(item.previous.map(\.fingerprint)),
                                                                    keys: item.keys, expecting: Self.seen(item, in: item.file)),
                                  hashNames: hashNames)]
            case .forget:
                return Set(item.previous.map(\.location.file)).sorted().map { file in
                    TrustEdit(path: file, change: .forget(names: item.names, expecting: Self.seen(item, in: file)))
                }
            case .pin:
                return [TrustEdit(path: item.file, change: .pin(names: item.names, fingerprints: pinned(item),
                                                                expecting: item.shownPins, spki: !item.spkiPins.isEmpty))]
            }
        }
    }

    /// One audit event per host.
    public func auditEvents(user: String, time: Date, outcome: AuditEvent.Outcome) -> [AuditEvent] {
        let decision = AuditEvent.Decision(rawValue: kind.rawValue) ?? .trust
        return items.map { item in
            let action: AuditEvent.Action = alarm.map { .forgotInAlarm(status: $0.rawValue, file: item.file) }
                ?? .decided(decision, file: item.file)
            // A host forgotten in alarm is recorded with the keys it presented: what may be trusted next.
            var event = AuditEvent(time: time, user: user, action: action, host: item.host, names: item.names,
                                   oldFingerprints: item.previous.map(\.fingerprint), newFingerprints: pinned(item),
                                   oldEntries: item.previous.map { "\($0.location): \($0.text)" }, outcome: outcome)
            event.provenance = item.recordedFrom
            return event
        }
    }

    /// One sentence saying what was written.
    public var summary: String {
        let hosts = items.map(\.host.name).joined(separator: ", ")
        let files = Set(items.map(\.file) + items.flatMap { $0.previous.map(\.location.file) }).sorted().joined(separator: ", ")
        switch kind {
        case .trust: return "Trusted \(hosts); entries appended to \(files)."
        case .replace: return "Replaced the key of \(hosts) in \(files); the old entry is in the audit log."
        case .forget:
            let kept = items.flatMap(\.kept)
            guard !kept.isEmpty else { return "Forgot \(hosts): its entries were removed from \(files)." }
            return "Forgot \(hosts): the lines shown were removed from \(files); "
                + "kept, as shown: " + kept.map { "\($0.location)" }.joined(separator: ", ") + "."
        case .pin: return "Pinned the keys of \(hosts) in \(files)."
        }
    }

    /// The keys' fingerprints and a TLS endpoint's SPKI pins.
    private func pinned(_ item: DecisionItem) -> [String] {
        item.keys.map(\.sha256Fingerprint) + item.spkiPins.map { "pin-sha256:" + $0 }
    }

    /// The fingerprints recorded for the host in `file` when the person decided.
    private static func seen(_ item: DecisionItem, in file: String) -> [String] {
        item.seen.filter { $0.location.file == file }.map(\.fingerprint)
    }
}

extension AuditLog {
    /// The records of a decision, one per host, with `outcome` as written.
    public static func records(for decision: Decision, user: String, time: Date, outcome: String) -> [Record] {
        decision.auditEvents(user: user, time: time, outcome: .finished(outcome)).map(\.record)
    }

    /// The record of a connection started from the dashboard.
    public static func connectRecord(host: InventoryHost, fingerprints: [String], command: [String], user: String,
                                     time: Date, outcome: String) -> Record {
        AuditEvent(time: time, user: user, action: .connected(command: command), host: host, newFingerprints: fingerprints,
                   outcome: .finished(outcome)).record
    }
}
