import Foundation

/// How trust in a host key was established, recorded with every accepted decision so
/// the dashboard and logs can say why a host is trusted.
public enum TrustMethod: String, Sendable, Codable, CaseIterable {
    case unsafeAnyVerifiedKey = "unsafe-any-verified-key"
    case requiredKey = "required-key"
    case knownHosts = "known-hosts"
    case certificateAuthority = "certificate-authority"
    case firstUse = "trust-on-first-use"
    case storedKey = "stored-key"
    case replacedChangedKey = "replaced-changed-key"
    case custom
}

/// The outcome of applying a policy to one presented key.
public struct TrustDecision: Sendable, Hashable {
    public var accepted: Bool
    /// How trust was established; nil when refused.
    public var method: TrustMethod?
    /// One sentence for people.
    public var reason: String
    /// OpenSSH's answer, when the policy consulted known_hosts.
    public var judgement: KeyJudgement?

    public init(accepted: Bool, method: TrustMethod?, reason: String, judgement: KeyJudgement? = nil) {
        self.accepted = accepted
        self.method = method
        self.reason = reason
        self.judgement = judgement
    }

    public static func refused(_ reason: String, judgement: KeyJudgement? = nil) -> TrustDecision {
        TrustDecision(accepted: false, method: nil, reason: reason, judgement: judgement)
    }
}

/// Where trust-on-first-use keeps keys; `store` is compare-and-set so two deciders
/// cannot silently overwrite each other.
public protocol TrustOnFirstUseStore: Sendable {
    /// The keys stored for the target's lookup name.
    func storedKeys(for target: ConnectionTarget) throws -> [HostKey]
    /// Stores `key`, replacing `expectedStoredKey` (nil: nothing of the key's type stored).
    /// Throws when the stored state is no longer what the caller saw.
    func store(_ key: HostKey, for target: ConnectionTarget, expectedStoredKey: HostKey?) throws
}

/// What to do when a trust-on-first-use host presents a key other than the stored one.
public enum ChangedKeyDecision: Sendable {
    case reject
    case replace
}

/// The presented key differs from what the store holds for the host.
public struct ChangedKey: Sendable, Hashable {
    public var target: ConnectionTarget
    public var presented: HostKey
    public var stored: [HostKey]
}

/// A rule deciding whether a verified host key is trusted; shared by the dashboard and
/// the command line. Every key handed in has already proved its holder (key exchange).
public struct TrustPolicy: Sendable {
    private let decide: @Sendable (HostKey, ConnectionTarget) throws -> TrustDecision

    public init(custom decide: @escaping @Sendable (HostKey, ConnectionTarget) throws -> TrustDecision) {
        self.decide = decide
    }

    public func evaluate(_ key: HostKey, for target: ConnectionTarget) throws -> TrustDecision {
        try decide(key, target)
    }

    /// UNSAFE: accepts whatever key the server proved it holds, which stops no
    /// impersonator. For throwaway test hosts only; never a default.
    public static let acceptAnyVerifiedKeyUnsafe = TrustPolicy { _, _ in
        TrustDecision(accepted: true, method: .unsafeAnyVerifiedKey, reason: "any verified key is accepted (unsafe)")
    }

    public static func requireKey(_ key: HostKey) -> TrustPolicy { requireAnyOf([key]) }

    public static func requireAnyOf(_ keys: Set<HostKey>) -> TrustPolicy {
        TrustPolicy { presented, _ in
            keys.contains(presented)
                ? TrustDecision(accepted: true, method: .requiredKey, reason: "the key is one of the required keys")
                : .refused("the key \(presented.sha256Fingerprint) is not one of the required keys")
        }
    }

    /// OpenSSH's verdict over `knownHosts`; `additionalLookupNames` is an extension
    /// beyond `ssh` (see `ConnectionTarget.additionalLookupNames`).
    public static func knownHosts(_ knownHosts: KnownHosts, additionalLookupNames: [String] = [],
                                  now: @escaping @Sendable () -> UInt64 = { UInt64(Date().timeIntervalSince1970) }) -> TrustPolicy {
        let judge = KnownHostsJudge(knownHosts: knownHosts)
        return TrustPolicy { key, target in
            var target = target
            target.additionalLookupNames += additionalLookupNames
            let judgement = try judge.judge(key, for: target, now: now())
            switch judgement.verdict {
            case .trusted: return TrustDecision(accepted: true, method: .knownHosts, reason: JudgementWords.judgement(judgement), judgement: judgement)
            case .trustedByCA: return TrustDecision(accepted: true, method: .certificateAuthority, reason: JudgementWords.judgement(judgement), judgement: judgement)
            default: return .refused(JudgementWords.judgement(judgement), judgement: judgement)
            }
        }
    }

    /// Trust on first use: an unknown host's key is stored and accepted; a known host must
    /// present a stored key; a changed key goes to `onChangedKey`.
    public static func trustOnFirstUse(store: any TrustOnFirstUseStore,
                                       onChangedKey: @escaping @Sendable (ChangedKey) -> ChangedKeyDecision = { _ in .reject }) -> TrustPolicy {
        TrustPolicy { key, target in
            let stored = try store.storedKeys(for: target)
            if stored.contains(key) {
                return TrustDecision(accepted: true, method: .storedKey, reason: "the key was stored on first use")
            }
            let sameType = stored.filter { $0.kind.plain == key.kind.plain }
            if stored.isEmpty {
                try store.store(key, for: target, expectedStoredKey: nil)
                return TrustDecision(accepted: true, method: .firstUse, reason: "first use: the key was stored")
            }
            switch onChangedKey(ChangedKey(target: target, presented: key, stored: stored)) {
            case .reject:
                return .refused("the host presents \(key.sha256Fingerprint), not the stored key")
            case .replace:
                try store.store(key, for: target, expectedStoredKey: sameType.first)
                return TrustDecision(accepted: true, method: .replacedChangedKey, reason: "the changed key replaced the stored one")
            }
        }
    }
}
