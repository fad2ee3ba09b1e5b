/// The rule that turns what is known about a host into its status: one per host.
///
/// The built-in policies (`standard`, `pinned`, `pin-only`, `ca`, `off`) are written with this
/// same API a library user writes a custom one with, so the product path and the library path are
/// one. A policy sees every fact the judge established (what `ssh` would decide, each key's
/// verdict, the pin answer, certificates vouched for by a pinned CA) and returns the status, why,
/// and how trust was established. The judge has already decided the statuses no policy may
/// quieten: a probe that failed stays `unreachable`, `error` or `unverified`. And whatever a policy returns, a
/// revoked key overrules it afterwards (`PolicyDecision.overruled`): no policy, built in or
/// custom, can trust a key known_hosts or `RevokedHostKeys` revokes; only `unchecked` stands.
///
/// A custom policy, for example one that trusts only hosts whose key is pinned *and* recorded:
///
///     let strict = TrustPolicy(name: "pinned-and-recorded") { facts in
///         guard facts.standard.status == .trusted, facts.pin.verdict == .matched else {
///             return facts.standard.status == .trusted ? .init(status: .unpinned, reason: .notPinned) : facts.standard
///         }
///         return facts.standard
///     }
///     let judge = FleetJudge(knownHosts: sets, pins: pins, policies: PolicyResolver(custom: [strict]))
public struct TrustPolicy: Sendable {
    /// Built-in or custom, and its name.
    public let identity: PolicyIdentity
    private let decide: @Sendable (PolicyFacts) -> PolicyDecision

    /// A custom policy.
    public init(name: String, decide: @escaping @Sendable (PolicyFacts) -> PolicyDecision) {
        self.identity = .custom(name)
        self.decide = decide
    }

    private init(_ name: PolicyName, decide: @escaping @Sendable (PolicyFacts) -> PolicyDecision) {
        self.identity = .builtIn(name)
        self.decide = decide
    }

    public var name: String { identity.description }

    public func decision(_ facts: PolicyFacts) -> PolicyDecision { decide(facts) }

    /// What `ssh` would decide from known_hosts, made stricter by the pins where a pin applies.
    public static let standard = TrustPolicy(.standard) { $0.standard }

    /// `standard`, and a pin must apply and match: a host no pin covers is `unpinned`.
    public static let pinned = TrustPolicy(.pinned) { facts in
        guard facts.standard.status == .trusted || facts.standard.status == .new else { return facts.standard }
        switch facts.pin.verdict {
        case .unpinned, .expired, .reportedMismatch: return PolicyDecision(status: .unpinned, reason: .notPinned)
        case .matched, .mismatch, .notListed: return facts.standard
        }
    }

    /// known_hosts is not consulted: the pin decides. For appliances whose known_hosts entries
    /// nobody manages. What no policy can quieten still counts: an invalid certificate, a key
    /// `ssh` could not use. The pin must vouch for the key `ssh` meets, when it is known: a pin
    /// that names only keys shown to the probe's other connections vouches for nothing `ssh` sees.
    public static let pinOnly = TrustPolicy(.pinOnly) { facts in
        if let alarm = facts.serverAlarm { return alarm }
        switch facts.pin.verdict {
        case .matched:
            if let met = facts.keys.first(where: \.isNegotiated)?.key, !facts.pin.vouches(for: met) {
                return PolicyDecision(status: .unpinned, reason: .notPinned)
            }
            return PolicyDecision(status: .trusted, reason: .pinMatched, trustedBy: [.pin])
        case .mismatch: return PolicyDecision(status: .pinMismatch, reason: .pinMismatch)
        case .unpinned, .expired, .reportedMismatch, .notListed: return PolicyDecision(status: .unpinned, reason: .notPinned)
        }
    }

    /// The host must present a valid host certificate from a CA pinned for it (`ca:` pins);
    /// plain keys do not count. known_hosts alarms still count. When the key `ssh` meets is
    /// known, it must be that certificate: one shown only to the probe's other connections is
    /// not what `ssh` is shown.
    public static let certificateAuthority = TrustPolicy(.ca) { facts in
        if facts.standard.status.alarmLevel == 2 && facts.standard.status != .pinMismatch { return facts.standard }
        if let alarm = facts.serverAlarm { return alarm }
        guard !facts.pin.pinnedAuthorities.isEmpty else { return PolicyDecision(status: .unpinned, reason: .notPinned) }
        let met = facts.keys.firstIndex(where: \.isNegotiated)
        guard let index = facts.keys.indices.first(where: { index in
            (met == nil || index == met) && facts.keys[index].key.map {
                $0.isCertificate && facts.pin.certifiedByPinnedCA.contains($0.fingerprint)
            } ?? false
        }) else { return PolicyDecision(status: .pinMismatch, reason: .noCertificateFromPinnedCA) }
        return PolicyDecision(status: .trusted, reason: .certificateFromPinnedCA(key: index), trustedBy: [.caPin])
    }

    /// UNSAFE: nothing is checked. Never `trusted`, never connectable.
    public static let off = TrustPolicy(.off) { _ in
        PolicyDecision(status: .unchecked, reason: .unchecked)
    }

    public static func builtIn(_ name: PolicyName) -> TrustPolicy {
        switch name {
        case .standard: return .standard
        case .pinned: return .pinned
        case .pinOnly: return .pinOnly
        case .ca: return .certificateAuthority
        case .off: return .off
        }
    }
}

/// The built-in policy names, as the policy file and `fleettrust_policy` write them.
public enum PolicyName: String, Sendable, Codable, CaseIterable {
    case standard, pinned
    case pinOnly = "pin-only"
    case ca, off
}

/// Everything the judge established before the policy speaks.
public struct PolicyFacts: Sendable {
    /// What `ssh` would decide from known_hosts, made stricter by the pins (the `standard` policy).
    public var standard: PolicyDecision
    public var keys: [JudgedKey]
    public var pin: PinJudgement

    /// What the server itself sent that no policy may quieten: an invalid certificate, or keys
    /// `ssh` could not use at all.
    public var serverAlarm: PolicyDecision? {
        if let index = keys.firstIndex(where: { $0.verdict == .invalidCertificate }) {
            return PolicyDecision(status: .invalidCertificate, reason: .invalidCertificate(key: index))
        }
        if standard.status == .error || standard.status == .unverified { return standard }
        return nil
    }
}

/// A policy's answer: the host's status, why, and how trust was established.
public struct PolicyDecision: Hashable, Sendable {
    public var status: HostStatus
    public var reason: StatusReason
    public var trustedBy: [TrustBasis]
    /// The failure behind an `error`, if any.
    public var failure: HostFailure?

    public init(status: HostStatus, reason: StatusReason, trustedBy: [TrustBasis] = [], failure: HostFailure? = nil) {
        self.status = status
        self.reason = reason
        self.trustedBy = trustedBy
        self.failure = failure
    }
}
