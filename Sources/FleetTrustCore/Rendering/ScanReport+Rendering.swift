import Foundation

/// A `JudgedHost` rendered as its scan-document entry, field by field: words and cleaned text, nothing decided.
extension ScanReport.Host {
    /// The host's entry: a rendering of its judgement, nothing decided here. `generatedAt` (RFC
    /// 3339) is its `scanned_at` when the probe's finish time is not known.
    public init(_ judged: JudgedHost, generatedAt: String) {
        let labels = judged.labels
        let host = judged.host
        self.name = labels.name.value
        self.host = labels.address.value
        self.port = host.port
        self.address = judged.probe.peerAddress
        self.user = labels.user?.value
        self.groups = labels.groups.map(\.value)
        self.knownHostsName = CleanText(judged.lookup.hostString, limit: 300).value
        self.ssh = ScanReport.SSHSettings(judged)
        self.status = judged.status
        self.reason = JudgementWords.reason(judged)
        self.method = JudgementWords.methodCode(judged)
        self.keys = judged.keys.map { ScanReport.Key($0, lookup: judged.lookup, drift: judged.drift, sharing: judged.keySharing) }
        self.pin = ScanReport.Pin(verdict: judged.pin.verdict, evidence: judged.pin.evidence.map(\.sentence))
        self.error = judged.failure.map { ScanReport.Failure($0.asProbeFailure) }
        self.serverVersion = judged.probe.serverVersion.map { CleanText($0).value }
        self.serverHostKeyAlgorithms = judged.probe.serverHostKeyAlgorithms.map { $0.prefix(64).map { CleanText($0, limit: 64).value } }
        self.negotiatedAlgorithm = judged.negotiatedAlgorithm
        self.scannedFrom = judged.probe.scanner?.value ?? "unknown"
        self.scannedAt = judged.probe.finishedAt.map(HistoryTime.rfc3339(date:)) ?? generatedAt
        self.stricterThanSSH = judged.stricterThanSSH
        self.policy = CleanText(judged.policy.description, limit: 64).value
        switch judged.policySource {
        case .defaultPolicy: self.policySource = "default"
        case .inventory: self.policySource = "inventory"
        case .file(let location): self.policySource = CleanText(location.description, limit: 300).value
        }
        self.standardStatus = judged.standardStatus
        self.drift = judged.drift?.kind
        self.driftMoves = judged.drift?.moves.map(ScanReport.DriftMove.init) ?? []
        self.route = judged.route.hops.map(ScanReport.Hop.init)
        self.endpointProtocol = judged.endpointProtocol
        self.sshfp = judged.sshfp.map { ScanReport.SSHFPEntry($0, judged: judged) }
        switch judged.probe.sshConnection {
        case .proved(let met)?:
            self.sshConnection = ScanReport.SSHConnection(key: judged.keys.firstIndex { $0.key == met.key }, algorithms: met.algorithms, error: nil)
        case .failed(let failure)?:
            self.sshConnection = ScanReport.SSHConnection(key: nil, algorithms: nil, error: ScanReport.Failure(failure))
        case nil: self.sshConnection = nil
        }
        self.unfetchedKeys = judged.endpointProtocol == .ssh ? judged.unfetched.map(ScanReport.UnfetchedKey.init) : nil
        if judged.endpointProtocol == .tls { renderTLS(judged) }
    }
}

extension ScanReport.Key {
    init(_ judged: JudgedKey, lookup: LookupName, drift: HostDrift?, sharing: KeySharing) {
        let key = judged.key
        // Computed once: for a certificate it is the certified key's, which is also what sharing counts by.
        let fingerprint = key?.sha256Fingerprint
        type = key?.type ?? judged.typeName
        bits = key?.bits ?? 0
        self.fingerprint = fingerprint
        self.key = key?.openSSHLine ?? "\(judged.typeName) \(Base64.encode(judged.malformed?.blob ?? []))"
        verdict = judged.verdict
        plainKeyVerdict = judged.judgement?.plainKeyVerdict
        pin = judged.pin
        negotiated = judged.isNegotiated
        unusable = judged.unusable
        evidence = [JudgementWords.key(judged, lookup: lookup)] + JudgementWords.evidence(judged)
        weaknesses = judged.discovered.map { WeakKeys.weaknesses(of: $0).map(\.rawValue) } ?? []
        algorithms = judged.discovered?.algorithms
        handshakeMilliseconds = judged.discovered?.handshakeMilliseconds.map { ($0 * 10).rounded() / 10 }
        certificate = judged.certificate.map { ScanReport.Certificate($0, problem: judged.certificateProblem, audit: judged.audit) }
        let seen = key.flatMap { key in fingerprint.flatMap { drift?.seen(KeyIdentity(type: key.type, fingerprint: $0)) } }
        firstSeen = seen.map { HistoryTime.rfc3339($0.firstSeen) }
        lastSeen = seen.map { HistoryTime.rfc3339($0.lastSeen) }
        sharedBy = sharing.isEmpty ? nil : fingerprint.flatMap { sharing.hostsByFingerprint[$0] }
    }
}

extension ScanReport.Certificate {
    public init(_ certificate: HostCertificate, problem: CertificateProblem?, audit: CertificateAudit?) {
        self.init(ca: certificate.signatureKey.sha256Fingerprint, caKey: certificate.signatureKey.openSSHLine,
                  principals: certificate.principals.map { CleanText($0).value },
                  serial: certificate.serial, keyID: CleanText(certificate.keyID).value,
                  validAfter: certificate.validAfter, validBefore: certificate.validBefore,
                  criticalOptions: certificate.criticalOptions.map { CleanText($0, limit: 128).value }, problem: problem,
                  expiresInDays: audit?.expiresInDays, warnings: audit?.warnings ?? [])
    }
}
