import FleetTrustCore

/// What the trust engine concluded about one host's probe, in the form the dashboard shows.
///
/// The dashboard does not decide trust: the driver asks a `RowAssessor` (the trust engine, or
/// `DiscoveryAssessor` until the engine is wired in) and hands the answer in as a message.
public struct RowAssessment: Equatable, Sendable {
    public var status: HostStatus
    public var keys: [KeyAssessment]
    /// How trust was established: `known_hosts`, `CA`, `pin`, or empty.
    public var method: String
    /// Host-level evidence lines, already sanitized (which file and line, which pin, which CA).
    public var evidence: [String]
    /// The names a new known_hosts entry is saved under (what `ssh` will look up).
    public var knownHostsNames: [String]
    /// The file a trust decision writes to.
    public var knownHostsFile: String
    /// Existing known_hosts lines for this host: what `x` removes, what a replace supersedes.
    public var recordedLines: [RecordedLine]
    /// Why this host may not be trusted from the dashboard (revoked, pin mismatch), if so.
    public var trustBlockedReason: String?
    /// The verdict for the key `ssh` would negotiate, when the assessor knows which one that is.
    public var negotiatedVerdict: KeyVerdict?

    public init(status: HostStatus, keys: [KeyAssessment] = [], method: String = "", evidence: [String] = [],
                knownHostsNames: [String] = [], knownHostsFile: String = "", recordedLines: [RecordedLine] = [],
                trustBlockedReason: String? = nil, negotiatedVerdict: KeyVerdict? = nil) {
        self.status = status
        self.keys = keys
        self.method = method
        self.evidence = evidence
        self.knownHostsNames = knownHostsNames
        self.knownHostsFile = knownHostsFile
        self.recordedLines = recordedLines
        self.trustBlockedReason = trustBlockedReason
        self.negotiatedVerdict = negotiatedVerdict
    }

    /// The verdict for the host as a whole, for the list column: a revoked or changed key wins,
    /// then the negotiated key's verdict, then the worst of the rest.
    public var knownHostsVerdict: KeyVerdict? {
        if let negotiatedVerdict, !keys.contains(where: { $0.knownHosts == .revoked || $0.knownHosts == .changed }) {
            return negotiatedVerdict
        }
        let order: [KeyVerdict] = [.revoked, .changed, .ipMismatch, .new, .trustedByCA, .trusted]
        return order.first { verdict in keys.contains { $0.knownHosts == verdict } }
    }

    public var pinVerdict: PinVerdict? {
        let order: [PinVerdict] = [.mismatch, .reportedMismatch, .expired, .matched, .unpinned]
        return order.first { verdict in keys.contains { $0.pin == verdict } }
    }
}

/// One presented key and the verdicts about it.
public struct KeyAssessment: Equatable, Sendable {
    public var key: DiscoveredKey
    public var knownHosts: KeyVerdict
    public var pin: PinVerdict
    /// For a changed key: what is recorded instead, and where.
    public var recorded: [RecordedLine]
    public var evidence: [String]

    public init(key: DiscoveredKey, knownHosts: KeyVerdict, pin: PinVerdict = .unpinned,
                recorded: [RecordedLine] = [], evidence: [String] = []) {
        self.key = key
        self.knownHosts = knownHosts
        self.pin = pin
        self.recorded = recorded
        self.evidence = evidence
    }
}

/// A known_hosts line as found on disk: where it is, and the key it records.
public struct RecordedLine: Equatable, Sendable {
    public var location: SourceLocation
    public var fingerprint: String
    /// The line itself (sanitized), for confirmations that show what will go.
    public var text: String

    public init(location: SourceLocation, fingerprint: String, text: String) {
        self.location = location
        self.fingerprint = fingerprint
        self.text = Sanitizer.clean(text, limit: 300)
    }
}

/// Turns a probe result into an assessment; implemented by the trust engine.
public protocol RowAssessor: Sendable {
    func assess(_ host: InventoryHost, _ result: ProbeResult) -> RowAssessment
}

extension RowAssessment {
    /// The assessment of a host that failed to answer, shared by every assessor.
    public static func failed(_ failure: ProbeFailure?) -> RowAssessment {
        let status = FleetJudge.failureStatus(failure)
        return RowAssessment(status: status, evidence: failure.map { ["\($0.stage.rawValue): \($0.message)"] } ?? [])
    }
}

/// The name `ssh` looks a host up under: its `HostKeyAlias`, or the address it connects to,
/// lower-cased and canonicalised as `ssh` does, written `[address]:port` for ports other than
/// 22. The trust engine's `LookupName` is the one rule; this only applies it to a host.
public func knownHostsName(for host: InventoryHost) -> String {
    LookupName(host: host.address, port: host.port, hostKeyAlias: host.hostKeyAlias).hostString
}
