import Foundation

/// Decides, for one presented key, what `ssh -o StrictHostKeyChecking=yes` decides
/// (`sshconnect.c:check_host_key`, `hostfile.c:check_hostkeys_by_key_or_type`).
///
/// A pure function of the parsed files, the target and the time: every branch of
/// OpenSSH's procedure (bare-name retry, certificate downgrade, CheckHostIP) is here
/// so that the verdict equals the real client's.
public struct KnownHostsJudge: Sendable {
    public let knownHosts: KnownHosts

    /// `CASignatureAlgorithms` as assembled for the host: a certificate signed otherwise is not
    /// accepted as a certificate.
    public var caSignatureAlgorithms = CertificateAcceptance.defaultCASignatureAlgorithms

    /// What the host's `KnownHostsCommand` printed for the key being judged, already matched.
    public var commandLines: CommandLines?

    public init(knownHosts: KnownHosts) { self.knownHosts = knownHosts }

    /// Lines a `KnownHostsCommand` printed that match the host string (`%I=HOSTNAME`) and the
    /// address string (`%I=ADDRESS`): merged with the files' for those two lookups only, since
    /// `ssh` runs no command for the bare-name retry of a non-22 port (`clobber_port`).
    public struct CommandLines: Sendable {
        public var host: [KnownHosts.Match]
        public var address: [KnownHosts.Match]

        public init(host: [KnownHosts.Match], address: [KnownHosts.Match]) {
            self.host = host
            self.address = address
        }
    }

    enum Status: Equatable { case ok, new, changed, revoked }

    struct Attempt {
        var accepted: Bool
        var verdict: KeyVerdict
        var evidence: [TrustEvidence]
        var viaRetry = false
        var downgraded = false
        var certificateProblem: CertificateProblem?
        var stricter: StricterChoice?
    }

    /// Judges `key` for `target`; `now` is seconds since the epoch (certificate validity).
    ///
    /// A certificate OpenSSH would not read as a key (bad CA signature, undecodable, not a host
    /// certificate) is `invalid-certificate`, with the answer for the key it certifies beside it.
    public func judge(_ key: HostKey, for target: ConnectionTarget,
                      now: UInt64 = UInt64(Date().timeIntervalSince1970)) -> KeyJudgement {
        if key.isCertificate {
            let certificate = try? HostCertificate(key)
            let problem = certificate.map(CertificateAcceptance.invalidity(of:)) ?? .undecodable
            if let problem {
                var judgement = certificate.map { judge($0.key, for: target, now: now) }
                    ?? KeyJudgement(verdict: .new, evidence: [],
                                    viaBareNameRetry: false, judgedAsPlainKey: true)
                judgement.plainKeyVerdict = judgement.verdict
                judgement.verdict = .invalidCertificate
                judgement.judgedAsPlainKey = true
                judgement.certificateProblem = problem
                if problem == .notHostCertificate { judgement.stricterThanSSH = .userCertificate }
                return judgement
            }
        }
        let lookup = target.lookup
        var checkIP = target.checkHostIPAddress.map { !LookupName.isLoopback($0) } ?? false
        let attempt = check(name: lookup.name, host: lookup.host, hostString: lookup.hostString, retryString: lookup.retryString,
                            address: target.checkHostIPAddress, port: target.port, key: key, checkIP: &checkIP, now: now,
                            command: commandLines)
        var judgement = KeyJudgement(verdict: attempt.verdict, evidence: attempt.evidence,
                                     viaBareNameRetry: attempt.viaRetry, judgedAsPlainKey: attempt.downgraded,
                                     certificateProblem: attempt.certificateProblem, viaAdditionalName: nil,
                                     stricterThanSSH: attempt.stricter)
        if judgement.verdict == .new { consultAdditionalNames(&judgement, key: key, target: target, now: now) }
        return judgement
    }

    /// Extension: when the primary name knows nothing, other names may vouch (or object).
    private func consultAdditionalNames(_ judgement: inout KeyJudgement, key: HostKey, target: ConnectionTarget, now: UInt64) {
        var firstChanged: (String, Attempt)?
        for name in target.additionalLookupNames {
            let lookup = LookupName(host: name, port: target.port)
            var noIP = false
            let attempt = check(name: lookup.name, host: lookup.host, hostString: lookup.hostString, retryString: lookup.retryString,
                                address: nil, port: target.port, key: key, checkIP: &noIP, now: now)
            switch attempt.verdict {
            case .revoked:
                apply(attempt, name: name, to: &judgement)
                return
            case .trusted, .trustedByCA:
                if judgement.verdict == .new { apply(attempt, name: name, to: &judgement) }
            case .changed, .ipMismatch:
                if firstChanged == nil { firstChanged = (name, attempt) }
            case .new, .notRecorded, .invalidCertificate:
                break
            }
        }
        if judgement.verdict == .new, let (name, attempt) = firstChanged { apply(attempt, name: name, to: &judgement) }
    }

    private func apply(_ attempt: Attempt, name: String, to judgement: inout KeyJudgement) {
        judgement.verdict = attempt.verdict
        judgement.evidence = attempt.evidence
        judgement.viaBareNameRetry = attempt.viaRetry
        judgement.judgedAsPlainKey = attempt.downgraded
        judgement.certificateProblem = attempt.certificateProblem
        judgement.viaAdditionalName = name
    }

    /// Judges many keys at once (a whole fleet): every lookup string is matched in one pass
    /// over the files first, then each key is judged as `judge` would.
    public func judge(batch: [(key: HostKey, target: ConnectionTarget)],
                      now: UInt64 = UInt64(Date().timeIntervalSince1970)) -> [KeyJudgement] {
        var lookups: [String] = []
        for (_, target) in batch {
            lookups.append(target.lookup.hostString)
            if let address = target.checkHostIPAddress {
                let canonical = LookupName.canonicalHost(address)
                lookups += [canonical, LookupName.hostPort(canonical, port: target.port)]
            }
            lookups += target.additionalLookupNames.map { LookupName(host: $0, port: target.port).hostString }
        }
        var prepared = knownHosts.preparing(lookups: lookups)
        // `ssh` retries the bare name only when `[host]:port` matches nothing: prepare those
        // retries in a second pass instead of doubling the first.
        let retries = batch.flatMap { item -> [LookupName] in
            [item.target.lookup] + item.target.additionalLookupNames.map { LookupName(host: $0, port: item.target.port) }
        }.filter { prepared.entries(matching: $0.hostString).isEmpty }.compactMap(\.retryString)
        if !retries.isEmpty { prepared = prepared.preparing(lookups: retries) }
        let ready = KnownHostsJudge(knownHosts: prepared)
        return batch.map { ready.judge($0.key, for: $0.target, now: now) }
    }

    /// One run of `check_host_key`; `checkIP` is shared with the retry, as OpenSSH's
    /// global option is (the retry can switch it off for the outer call).
    private func check(name: String, host: String, hostString: String, retryString: String?, address: String?, port: Int,
                       key: HostKey, checkIP: inout Bool, now: UInt64, command: CommandLines? = nil) -> Attempt {
        let ipString = address.map { LookupName.hostPort(LookupName.canonicalHost($0), port: port) }
        if checkIP, ipString == host { checkIP = false }
        let hostMatches = knownHosts.entries(matching: hostString) + (command?.host ?? [])
        let ipMatches = (!key.isCertificate && checkIP) ? ipString.map { knownHosts.entries(matching: $0) + (command?.address ?? []) } : nil

        var current = key
        var certificateProblem: CertificateProblem?
        var downgraded = false
        while true {
            let certificate = current.isCertificate ? try? HostCertificate(current) : nil
            let (hostStatus, hostEvidence) = status(hostMatches, key: current, certificate: certificate)
            var ipStatus = hostStatus, ipEvidence: [TrustEvidence] = []
            if certificate == nil, let ipMatches { (ipStatus, ipEvidence) = status(ipMatches, key: current, certificate: nil) }

            var attempt = Attempt(accepted: false, verdict: .new, evidence: hostEvidence, downgraded: downgraded)
            var failed = true
            switch hostStatus {
            case .ok:
                if let certificate, let problem = CertificateAcceptance.problem(with: certificate, name: name, now: now, allowedSignatures: caSignatureAlgorithms) {
                    certificateProblem = problem
                } else {
                    attempt.verdict = certificate == nil ? .trusted : .trustedByCA
                    failed = false
                }
            case .new:
                if let retryString {
                    let inner = check(name: name, host: host, hostString: retryString, retryString: nil, address: address, port: 0,
                                      key: current, checkIP: &checkIP, now: now)
                    if inner.accepted {
                        attempt = inner
                        attempt.viaRetry = true
                        attempt.downgraded = attempt.downgraded || downgraded
                        failed = false
                    } else if inner.verdict == .revoked {
                        // ssh discards the retry's REVOKED and says "unknown"; saving the key under
                        // [host]:port would then make ssh accept a key the team revoked.
                        attempt = inner
                        attempt.viaRetry = true
                        attempt.stricter = .revokedOnBareName
                        return attempt
                    }
                }
            case .revoked:
                attempt.verdict = .revoked
            case .changed:
                attempt.verdict = .changed
            }
            if !failed, checkIP, hostStatus != .changed, ipStatus == .changed {
                attempt.verdict = .ipMismatch
                attempt.evidence += ipEvidence.map { var e = $0; e.role = .addressDifferentKey; return e }
                failed = true
            }
            attempt.certificateProblem = certificateProblem
            if !failed {
                attempt.accepted = true
                return attempt
            }
            if let certificate, hostStatus != .revoked {
                if certificateProblem == nil { certificateProblem = .unknownCA }
                current = certificate.key
                downgraded = true
                continue
            }
            return attempt
        }
    }

    /// `check_hostkeys_by_key_or_type` then `check_key_not_revoked` over matching lines.
    func status(_ matches: [KnownHosts.Match], key: HostKey, certificate: HostCertificate?) -> (Status, [TrustEvidence]) {
        var result = Status.new
        var evidence: [TrustEvidence] = []
        let wanted: KnownHostsMarker? = certificate == nil ? nil : .certAuthority
        let presented = RecordedKey.key(key)
        let publicPart = RecordedKey.key(certificate?.key ?? key)
        let authority = certificate.map { RecordedKey.key($0.signatureKey) }
        for match in matches where match.entry.marker == wanted {
            if let authority {
                if match.entry.publicKey == authority {
                    result = .ok
                    evidence = [TrustEvidence(.certificateAuthority, match)]
                    break
                }
            } else if match.entry.key == presented {
                result = .ok
                evidence = [TrustEvidence(.matchedKey, match)]
                break
            } else {
                result = .changed
                evidence.append(TrustEvidence(.differentKey, match))
            }
        }
        let revocations = matches.filter {
            $0.entry.marker == .revoked && ($0.entry.publicKey == publicPart || (authority != nil && $0.entry.publicKey == authority))
        }
        if !revocations.isEmpty {
            return (.revoked, revocations.map { TrustEvidence(.revocation, $0) })
        }
        return (result, evidence)
    }
}
