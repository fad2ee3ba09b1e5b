/// What `sync` does with each judged host: its `JudgedHost.saving` answer, gated by what proves
/// the keys. Nothing is judged here: only a host the judge offers for saving (`.save(keys)`: new,
/// usable plain keys, no alarm) is ever added, and by default only when a pin or a pinned CA
/// proves its keys; `--trust-on-first-use` lets an unpinned one in, with only the key `ssh` meets
/// (`FirstUseKeys`). A host presenting again a key it had replaced (`reverted` drift) is never
/// added, whatever proves it: an intermittent man in the middle looks exactly like that.
public struct SyncPlan: Sendable {
    public enum Action: Equatable, Sendable {
        /// Append these keys (those the host's file does not already record) under the host's
        /// save names; `recorded` is what that file recorded for the names when judged (the
        /// compare-and-set expectation). `withheld` are proved keys left out: nothing vouches that
        /// their connections reached the machine `ssh` meets (`FirstUseKeys`).
        case add(keys: [HostKey], recorded: [String], proof: Proof, withheld: [HostKey])
        case alreadyTrusted
        /// Never touched: the judgement refuses saving (changed, revoked, pin mismatch, invalid
        /// certificate), or the host's keys reverted to one they had replaced.
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
        if judged.drift?.kind == .reverted { return .refused }
        switch judged.saving {
        case .save(let all):
            // A pin proves only the keys it names; first use saves only the key ssh meets (`FirstUseKeys`).
            let choice = FirstUseKeys(judged, offered: all)
            let keys: [HostKey], proof: Proof
            if trustOnFirstUse, choice.firstUse != nil {
                (keys, proof) = (choice.saved, .trustOnFirstUse)
            } else if judged.pin.verdict == .matched, !choice.provedByPin.isEmpty {
                let proved = choice.provedByPin
                (keys, proof) = (proved, proved.contains { judged.pin.pinned.contains($0.fingerprint) } ? .pin : .caPin)
            } else if trustOnFirstUse {
                return .notAdded("new, and ssh would meet none of the keys it proved (nothing to save on first use)")
            } else {
                return .notAdded("new, and no pin proves its keys (pin them, or pass --trust-on-first-use)")
            }
            let recorded = judged.recorded.filter { $0.location.file == judged.saveFile }.map(\.fingerprint)
            let adding = keys.filter { !recorded.contains($0.sha256Fingerprint) }
            guard !adding.isEmpty else { return .notAdded("new: \(JudgementWords.reason(judged))") }
            let withheld = all.filter { key in !keys.contains(key) }
            return .add(keys: adding, recorded: recorded, proof: proof, withheld: withheld)
        case .replace:
            return .refused
        case .refused(let refusal):
            switch refusal {
            case .alreadyTrusted: return .alreadyTrusted
            case .revoked, .pinMismatch, .invalidCertificate, .splitView, .unverified: return .refused
            case .notSSH:
                return .notAdded("a TLS endpoint, \(judged.status.rawValue): \(JudgementWords.reason(judged)); "
                                 + "nothing goes to known_hosts (pin its key in the pin file)")
            case .notPinned, .unchecked, .notProbedYet, .noUsableKey, .nothingToSave, .noKeySSHMeets:
                return .notAdded("\(judged.status.rawValue): \(JudgementWords.reason(judged))")
            }
        }
    }

    /// Each host's level by `ExitStatusRule` (a reverted key raises it to 2), at least 1 for an
    /// SSH host refused or not added (it is left untrusted); a TLS endpoint, which `sync` never
    /// writes, is at its own level (0 trusted, 2 in alarm). `failedWrites` are hosts whose write
    /// was refused or failed (1).
    public func exitStatus(failedWrites: Int) -> Int32 {
        var status: Int32 = failedWrites > 0 ? 1 : 0
        for entry in entries {
            let level = ExitStatusRule.host(entry.judged)
            switch entry.action {
            case .add: continue
            case .alreadyTrusted: status = max(status, level)
            case .refused, .notAdded:
                status = max(status, entry.judged.host.endpointProtocol == .ssh ? max(1, level) : level)
            }
        }
        return status
    }
}
