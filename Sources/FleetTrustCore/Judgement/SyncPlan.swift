/// What `sync` does with each judged host: its `JudgedHost.saving` answer, gated by what proves
/// the keys. Nothing is judged here: only a host the judge offers for saving (`.save(keys)`: new,
/// usable plain keys, no alarm) is ever added, and by default only when a pin or a pinned CA
/// proves its keys; `--trust-on-first-use` lets an unpinned one in.
public struct SyncPlan: Sendable {
    public enum Action: Equatable, Sendable {
        /// Append these keys (those the host's file does not already record) under the host's
        /// save names; `recorded` is what that file recorded for the names when judged (the
        /// compare-and-set expectation).
        case add(keys: [HostKey], recorded: [String], proof: Proof)
        case alreadyTrusted
        /// Never touched: the judgement refuses saving (changed, revoked, pin mismatch, invalid
        /// certificate).
        case refused
        /// Left alone for a reason that is no alarm (no pin, unreachable, nothing usable).
        case notAdded(String)
    }

    public enum Proof: String, Sendable {
        case pin
        case caPin = "pinned CA"
        case trustOnFirstUse = "trust on first use"
    }

    public struct Entry: Sendable {
        public var judged: JudgedHost
        public var action: Action
    }

    public var entries: [Entry]

    public init(_ judged: [JudgedHost], trustOnFirstUse: Bool) {
        entries = judged.map { Entry(judged: $0, action: Self.action(for: $0, trustOnFirstUse: trustOnFirstUse)) }
    }

    public static func action(for judged: JudgedHost, trustOnFirstUse: Bool) -> Action {
        switch judged.saving {
        case .save(let all):
            // A pin proves only the keys it names (or whose certificate its CA signed): the others are first use.
            let proved = all.filter { judged.pin.pinned.contains($0.fingerprint) || judged.pin.certifiedByPinnedCA.contains($0.fingerprint) }
            let keys: [HostKey], proof: Proof
            if trustOnFirstUse, proved.count < all.count {
                (keys, proof) = (all, .trustOnFirstUse)
            } else if judged.pin.verdict == .matched, !proved.isEmpty {
                (keys, proof) = (proved, proved.contains { judged.pin.pinned.contains($0.fingerprint) } ? .pin : .caPin)
            } else {
                return .notAdded("new, and no pin proves its keys (pin them, or pass --trust-on-first-use)")
            }
            let recorded = judged.recorded.filter { $0.location.file == judged.saveFile }.map(\.fingerprint)
            let adding = keys.filter { !recorded.contains($0.sha256Fingerprint) }
            guard !adding.isEmpty else { return .notAdded("new: \(JudgementWords.reason(judged))") }
            return .add(keys: adding, recorded: recorded, proof: proof)
        case .replace:
            return .refused
        case .refused(let refusal):
            switch refusal {
            case .alreadyTrusted: return .alreadyTrusted
            case .revoked, .pinMismatch, .invalidCertificate, .splitView, .unverified: return .refused
            case .notSSH: return .notAdded("a TLS endpoint: nothing goes to known_hosts (pin its key in the pin file)")
            case .notPinned, .unchecked, .notProbedYet, .noUsableKey, .nothingToSave:
                return .notAdded("\(judged.status.rawValue): \(JudgementWords.reason(judged))")
            }
        }
    }

    /// 2 when a host was refused for an alarm (changed, revoked, pin-mismatch, invalid
    /// certificate), 1 when some host is left untrusted, else 0. `failedWrites` are hosts whose
    /// write was refused or failed.
    public func exitStatus(failedWrites: Int) -> Int32 {
        var status: Int32 = failedWrites > 0 ? 1 : 0
        for entry in entries {
            switch entry.action {
            case .add, .alreadyTrusted: continue
            case .refused: status = max(status, max(1, ExitStatusRule.host(entry.judged)))
            case .notAdded: status = max(status, 1)
            }
        }
        return status
    }
}
