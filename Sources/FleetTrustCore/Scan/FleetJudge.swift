import Foundation

/// Judges what the probes found against known_hosts and the pins: the one path that both
/// `fleettrust scan` and the dashboard use, so what they show always agrees.
///
/// Pure: it reads files only through the values it was given, never the network.
public struct FleetJudge: Sendable {
    public let knownHosts: KnownHosts
    public let pins: PinSet?
    public let pinMode: PinMode
    /// The extension: also consult names other than the one `ssh` looks up (off by default).
    public let useAdditionalNames: Bool

    public init(knownHosts: KnownHosts, pins: PinSet?, pinMode: PinMode = .enforce, useAdditionalNames: Bool = false) {
        self.knownHosts = knownHosts
        self.pins = pins
        self.pinMode = pinMode
        self.useAdditionalNames = useAdditionalNames
    }

    /// A judge whose known_hosts has already matched its hashed lines against every name these
    /// hosts will be looked up under, in one pass over both cores. The bare name `ssh` retries
    /// for a non-22 port is prepared only where `[host]:port` records no key: elsewhere the retry
    /// never happens. (A name not prepared is still matched, one lookup at a time.)
    public func preparing(for hosts: [InventoryHost]) -> FleetJudge {
        var lookups: [String] = []
        var retries: [(hostString: String, retry: String)] = []
        for host in hosts {
            let target = target(for: host)
            lookups.append(target.lookup.hostString)
            if let retry = target.lookup.retryString { retries.append((target.lookup.hostString, retry)) }
            for name in target.additionalLookupNames {
                let extra = ConnectionTarget(host: name, port: host.port).lookup
                lookups.append(extra.hostString)
                if let retry = extra.retryString { lookups.append(retry) }
            }
        }
        var prepared = knownHosts.preparing(lookups: lookups)
        let needed = retries.filter { pair in
            !prepared.entries(matching: pair.hostString).contains { $0.entry.marker == nil }
        }.map(\.retry)
        if !needed.isEmpty { prepared = prepared.preparing(lookups: needed) }
        return FleetJudge(knownHosts: prepared, pins: pins, pinMode: pinMode, useAdditionalNames: useAdditionalNames)
    }

    /// How `ssh` would reach and name this host.
    public func target(for host: InventoryHost) -> ConnectionTarget {
        ConnectionTarget(host: host.address, port: host.port, hostKeyAlias: host.hostKeyAlias,
                         additionalLookupNames: useAdditionalNames ? host.additionalNames : [])
    }

    /// The known_hosts name `ssh` looks the host up under (`host`, `[host]:port`, or the alias).
    public func knownHostsName(for host: InventoryHost) -> String { target(for: host).lookup.hostString }

    /// The assessment of a probe that found keys; nil when it found none.
    public func assess(_ host: InventoryHost, _ result: ProbeResult,
                       now: UInt64 = UInt64(Date().timeIntervalSince1970)) -> HostAssessment? {
        guard !result.keys.isEmpty else { return nil }
        return try? HostAssessment.assess(keys: result.keys.map(\.key), target: target(for: host),
                                          knownHosts: knownHosts, pins: pins, pinMode: pinMode, now: now)
    }

    /// A host with no keys: unreachable when nothing answered, error when something did but
    /// not as an SSH server we could verify.
    public static func failureStatus(_ failure: ProbeFailure?) -> HostStatus {
        guard let failure else { return .error }
        switch failure.stage {
        case .resolve, .connect: return .unreachable
        case .banner: return failure.code == "banner-timeout" ? .unreachable : .error
        case .keyExchange, .cancelled: return .error
        }
    }

    /// The host's row in the scan report.
    public func report(_ host: InventoryHost, _ result: ProbeResult, sharesKeysWith: [String] = [],
                       now: UInt64 = UInt64(Date().timeIntervalSince1970)) -> ScanReport.Host {
        let assessment = assess(host, result, now: now)
        let status = assessment?.status ?? FleetJudge.failureStatus(result.failure)
        let keys = result.keys.map { discovered -> ScanReport.Key in
            let keyAssessment = assessment?.keys.first { $0.key == discovered.key }
            return ScanReport.Key(
                type: discovered.key.type, bits: discovered.key.bits,
                fingerprint: discovered.key.sha256Fingerprint, key: discovered.key.openSSHLine,
                verdict: keyAssessment.map(FleetJudge.verdictWord) ?? KeyVerdict.new.rawValue,
                pin: assessment?.pin.verdict.rawValue ?? PinVerdict.unpinned.rawValue,
                evidence: (keyAssessment?.judgement.evidence ?? []).map(\.sentence)
                    + (assessment?.pin.evidence ?? []).map(\.sentence),
                weaknesses: WeakKeys.weaknesses(of: discovered).map(\.rawValue),
                algorithms: discovered.algorithms,
                handshakeMilliseconds: discovered.handshakeMilliseconds.map { ($0 * 10).rounded() / 10 },
                certificate: discovered.key.isCertificate ? (try? HostCertificate(discovered.key)).map(ScanReport.Certificate.init) : nil)
        }
        return ScanReport.Host(
            name: Sanitizer.clean(host.name, limit: 256), host: Sanitizer.clean(host.address, limit: 256), port: host.port,
            address: result.peerAddress, user: host.user.map { Sanitizer.clean($0, limit: 64) },
            groups: (host.groups + host.inheritedGroups).map { Sanitizer.clean($0, limit: 128) },
            knownHostsName: Sanitizer.clean(knownHostsName(for: host), limit: 300), status: status,
            method: FleetJudge.method(status: status, assessment: assessment, failure: result.failure),
            keys: keys, error: assessment == nil ? result.failure.map(ScanReport.Failure.init) : nil,
            serverVersion: result.serverVersion, sharesKeysWith: sharesKeysWith)
    }

    /// `not-recorded` for a key whose type has nothing recorded while other types are.
    static func verdictWord(_ assessment: HostAssessment.KeyAssessment) -> String {
        if assessment.judgement.verdict == .changed && !assessment.typeRecorded { return "not-recorded" }
        return assessment.judgement.verdict.rawValue
    }

    /// How trust was established, or why it was not, in one phrase.
    static func method(status: HostStatus, assessment: HostAssessment?, failure: ProbeFailure?) -> String {
        guard let assessment else { return failure.map { "\($0.stage.rawValue) failed (\($0.code))" } ?? "no keys" }
        let negotiated = assessment.keys.first { $0.key == assessment.negotiatedKey }
        switch status {
        case .trusted:
            var text = negotiated?.judgement.verdict == .trustedByCA ? "known_hosts @cert-authority" : "known_hosts"
            if negotiated?.judgement.viaBareNameRetry == true { text += " (name without port)" }
            if negotiated?.judgement.viaAdditionalName != nil { text += " (additional name)" }
            if assessment.pin.verdict == .matched { text += " + pin" }
            return text
        case .new: return assessment.pin.verdict == .matched ? "pinned, not in known_hosts" : "nothing recorded"
        case .changed: return "known_hosts records another key"
        case .revoked: return "known_hosts @revoked"
        case .pinMismatch: return "no presented key is pinned"
        default: return status.rawValue
        }
    }
}
