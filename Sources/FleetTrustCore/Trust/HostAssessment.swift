import Foundation

/// The trust status of a host from all the keys a probe discovered, made stricter than
/// `ssh`: the key `ssh` would negotiate decides, but any revoked key, or any key whose
/// type is recorded only with other keys, also counts; then the pins.
///
/// A probe sees every key a server holds while `ssh` meets only one, so a swapped key of a
/// type `ssh` would not pick today is still worth reporting before it is picked tomorrow.
public struct HostAssessment: Sendable, Hashable {
    public var status: HostStatus
    /// The key `ssh` would negotiate (`sshconnect2.c:order_hostkeyalgs`), if any key was found.
    public var negotiatedKey: HostKey?
    public var keys: [KeyAssessment]
    public var pin: PinJudgement

    /// One discovered key and what known_hosts says about it.
    public struct KeyAssessment: Sendable, Hashable {
        public var key: HostKey
        public var judgement: KeyJudgement
        /// False when nothing of this key's type is recorded for the host: such a key is
        /// "not recorded", never "changed".
        public var typeRecorded: Bool
    }

    /// OpenSSH 9.2's default `HostKeyAlgorithms` order, as key types: certificates first.
    static let defaultOrder = ["ssh-ed25519-cert-v01@openssh.com", "ecdsa-sha2-nistp256-cert-v01@openssh.com",
                               "ecdsa-sha2-nistp384-cert-v01@openssh.com", "ecdsa-sha2-nistp521-cert-v01@openssh.com",
                               "ssh-rsa-cert-v01@openssh.com",
                               "ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
                               "ssh-rsa", "ssh-dss"]

    public static func assess(keys: [HostKey], target: ConnectionTarget, knownHosts: KnownHosts,
                              pins: PinSet? = nil, pinMode: PinMode = .enforce,
                              now: UInt64 = UInt64(Date().timeIntervalSince1970)) throws -> HostAssessment {
        let judge = KnownHostsJudge(knownHosts: knownHosts)
        let lookup = target.lookup
        let recorded = recordedTypes(knownHosts, lookup: lookup)
        let assessed = try keys.map { key in
            KeyAssessment(key: key, judgement: try judge.judge(key, for: target, now: now),
                          typeRecorded: recorded.contains(key.kind.plain.name))
        }
        let forHost = knownHosts.entries(matching: lookup.hostString)
        let preferred = Set(forHost.filter { $0.entry.marker == nil }
            .map { $0.entry.key.hostKey?.type ?? $0.entry.key.typeName })
        let negotiated = negotiatedKey(keys, preferredTypes: preferred,
                                       preferCertificates: forHost.contains { $0.entry.marker == .certAuthority })
        let pin = PinJudgement.judge(keys: keys, lookup: lookup, pins: pins, mode: pinMode, now: now)

        var status: HostStatus = .new
        if let negotiated, let chosen = assessed.first(where: { $0.key == negotiated }) {
            status = hostStatus(chosen.judgement.verdict)
        }
        if assessed.contains(where: { $0.judgement.verdict == .revoked }) {
            status = .revoked
        } else if status != .changed, assessed.contains(where: { $0.typeRecorded && $0.judgement.verdict == .changed }) {
            status = .changed
        } else if status != .changed, pin.verdict == .mismatch {
            status = .pinMismatch
        }
        if keys.isEmpty { status = .error }
        return HostAssessment(status: status, negotiatedKey: negotiated, keys: assessed, pin: pin)
    }

    /// The assessment of one probe: its keys judged for its host and port; a probe that
    /// found no key is `unreachable` (resolve, connect, banner) or `error` (later stages).
    public static func assess(probe: ProbeResult, knownHosts: KnownHosts, pins: PinSet? = nil, pinMode: PinMode = .enforce,
                              additionalLookupNames: [String] = [],
                              now: UInt64 = UInt64(Date().timeIntervalSince1970)) throws -> HostAssessment {
        let target = ConnectionTarget(host: probe.host, port: probe.port, additionalLookupNames: additionalLookupNames)
        var assessment = try assess(keys: probe.keys.map(\.key), target: target, knownHosts: knownHosts,
                                    pins: pins, pinMode: pinMode, now: now)
        if probe.keys.isEmpty, let failure = probe.failure {
            assessment.status = [.resolve, .connect, .banner].contains(failure.stage) ? .unreachable : .error
        }
        return assessment
    }

    static func hostStatus(_ verdict: KeyVerdict) -> HostStatus {
        switch verdict {
        case .trusted, .trustedByCA: return .trusted
        case .new: return .new
        case .changed, .ipMismatch: return .changed
        case .revoked: return .revoked
        }
    }

    /// The key `ssh` would negotiate (`order_hostkeyalgs`): in the client's default order, first
    /// the types recorded for the lookup string (every certificate type when a `@cert-authority`
    /// line matches it), then the rest, so certificates lead when nothing is recorded.
    static func negotiatedKey(_ keys: [HostKey], preferredTypes: Set<String>, preferCertificates: Bool) -> HostKey? {
        let ranked = keys.sorted { rank($0.type) < rank($1.type) }
        let preferred = ranked.first { key in
            key.isCertificate ? preferCertificates : preferredTypes.contains(key.type)
        }
        return preferred ?? ranked.first
    }

    private static func rank(_ type: String) -> Int { defaultOrder.firstIndex(of: type) ?? defaultOrder.count }

    /// Plain key types with unmarked lines for the lookup (or, on a non-22 port with nothing
    /// recorded for `[host]:port`, for the bare name that `ssh` would retry).
    static func recordedTypes(_ knownHosts: KnownHosts, lookup: LookupName) -> Set<String> {
        var matches = knownHosts.entries(matching: lookup.hostString)
        if matches.isEmpty, let retry = lookup.retryString { matches = knownHosts.entries(matching: retry) }
        return Set(matches.filter { $0.entry.marker == nil }.map { entry -> String in
            entry.entry.key.hostKey?.kind.plain.name ?? entry.entry.key.typeName
        })
    }
}
