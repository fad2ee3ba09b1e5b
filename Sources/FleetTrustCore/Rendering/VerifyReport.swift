import Foundation

/// What `verify` prints, as text or JSON: a rendering of the key's judgement.
public struct VerifyReport {
    public let judged: JudgedHost

    public init(judged: JudgedHost) {
        self.judged = judged
    }

    /// The key judged as `ssh HOST` (port, `HostKeyAlias`, `CheckHostIP` as given) would judge
    /// it, against these files and pins; `additionalNames` is the `--lookup-name` extension.
    public init(host: String, port: Int, key: HostKey, hostKeyAlias: String?, checkHostIP: String?, additionalNames: [String],
                knownHosts: KnownHosts, pins: PinSet?, pinMode: PinMode) {
        var inventoryHost = InventoryHost(name: host, port: port, hostKeyAlias: hostKeyAlias)
        inventoryHost.sshOptions.checkHostIP = checkHostIP != nil
        let probe = ProbeResult(host: host, port: port, peerAddress: checkHostIP, keys: [DiscoveredKey(key: key)])
        judged = FleetJudge(knownHosts: knownHosts, pins: pins, pinMode: pinMode).judge(inventoryHost, probe, additionalNames: additionalNames)
    }

    /// The exit status, as scan's: 0 trusted, 1 not trusted, 2 an alarm.
    public var exitStatus: Int32 { ExitStatusRule.host(judged) }

    public var key: JudgedKey { judged.keys[0] }

    /// The verdict word: the key's (OpenSSH's, or `invalid-certificate`), or `pin-mismatch` when an
    /// enforced pin fails (a revocation or a changed key still wins).
    public var verdict: String {
        judged.status == .pinMismatch ? HostStatus.pinMismatch.rawValue : key.verdict.rawValue
    }

    public var summary: String { JudgementWords.key(key, lookup: judged.lookup) }

    public var text: String {
        let first = judged.status == .pinMismatch ? "\(verdict): no pinned key was presented; known_hosts says \(summary)" : summary
        var lines = [first, "key: \(key.typeName) \(key.key?.sha256Fingerprint ?? "")"]
        lines += JudgementWords.evidence(key).map { "evidence: \($0)" }
        if judged.status == .error { lines.append("ssh would refuse: \(JudgementWords.reason(judged))") }
        if judged.pin.verdict != .unpinned {
            lines.append("pin: \(judged.pin.verdict.rawValue)")
            lines += judged.pin.evidence.map { "pin evidence: \($0.sentence)" }
        }
        return lines.map { Sanitizer.clean($0, limit: 1024) }.joined(separator: "\n")
    }

    struct JSONShape: Encodable {
        public var verdict: String
        var status: HostStatus
        var knownHostsVerdict: String
        var lookup: String
        var keyType: String
        var fingerprint: String
        public var summary: String
        var viaBareNameRetry: Bool
        var judgedAsPlainKey: Bool
        var certificateProblem: CertificateProblem?
        var viaAdditionalName: String?
        var evidence: [TrustEvidence]
        var pin: String
        var pinEvidence: [TrustEvidence]
    }

    public var json: String {
        let judgement = key.judgement
        let shape = JSONShape(verdict: verdict, status: judged.status, knownHostsVerdict: key.verdict.rawValue,
                              lookup: CleanText(judged.lookup.hostString).value,
                              keyType: key.typeName, fingerprint: key.key?.sha256Fingerprint ?? "", summary: summary,
                              viaBareNameRetry: judgement?.viaBareNameRetry ?? false,
                              judgedAsPlainKey: judgement?.judgedAsPlainKey ?? false,
                              certificateProblem: key.certificateProblem,
                              viaAdditionalName: judgement?.viaAdditionalName.map { CleanText($0).value },
                              evidence: judgement?.evidence ?? [], pin: judged.pin.verdict.rawValue, pinEvidence: judged.pin.evidence)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return String(decoding: (try? encoder.encode(shape)) ?? Data("{}".utf8), as: UTF8.self)
    }
}
