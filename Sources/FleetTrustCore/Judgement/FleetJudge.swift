import Foundation

/// The one judge: turns an inventory host and a probe result into a `JudgedHost`, against the
/// known_hosts files `ssh` would read for that host, the team's pins and the clock.
///
/// Pure: it reads files only through the values it was given, never the network. `scan`, its
/// replay, `verify` and the dashboard all judge through here, so what they say always agrees.
public struct FleetJudge: Sendable {
    public let knownHosts: KnownHostsSets
    public let pins: PinSet?
    public let pinMode: PinMode
    /// The extension: also consult names other than the one `ssh` looks up (off by default).
    public let useAdditionalNames: Bool
    /// Each host's trust policy.
    public let policies: PolicyResolver
    /// A certificate expiring within this many days is flagged `expires-soon`.
    public var certificateWarnDays = 30
    /// What the history store remembered before this run; nil: no history, no drift.
    public var history: FleetHistory?
    /// The CAs a TLS endpoint's chain must lead to (`--tls-ca-file`, else the system store,
    /// read only when a TLS endpoint is first judged: loading it costs more CPU than judging a
    /// few hundred SSH hosts).
    public var tlsAnchors: TLSTrustAnchors {
        get { chosenAnchors ?? FleetJudge.systemAnchors }
        set { chosenAnchors = newValue }
    }
    private var chosenAnchors: TLSTrustAnchors?
    /// The `RevokedHostKeys` files the hosts name, read once each.
    public var revocationLists = RevocationLists()
    /// The SSHFP answers for the names hosts with `VerifyHostKeyDNS` look up (`SSHFPQuery`),
    /// asked before judging; a name without an answer is judged as one without records.
    public var sshfpAnswers: [String: SSHFPAnswer] = [:]

    static let systemAnchors = TLSTrustAnchors.system()

    public init(knownHosts: KnownHostsSets, pins: PinSet?, pinMode: PinMode = .enforce, useAdditionalNames: Bool = false,
                policies: PolicyResolver = PolicyResolver()) {
        self.knownHosts = knownHosts
        self.pins = pins
        self.pinMode = pinMode
        self.useAdditionalNames = useAdditionalNames
        self.policies = policies
    }

    /// One set of known_hosts files for every host.
    public init(knownHosts: KnownHosts, pins: PinSet?, pinMode: PinMode = .enforce, useAdditionalNames: Bool = false,
                policies: PolicyResolver = PolicyResolver()) {
        self.init(knownHosts: KnownHostsSets(knownHosts), pins: pins, pinMode: pinMode, useAdditionalNames: useAdditionalNames,
                  policies: policies)
    }

    /// A judge whose files have already matched their hashed lines against every name these hosts
    /// will be looked up under, in one pass over both cores. The bare name `ssh` retries for a
    /// non-22 port is prepared only where `[host]:port` records no key: elsewhere the retry never
    /// happens. (A name not prepared is still matched, one lookup at a time.)
    public func preparing(for hosts: [InventoryHost]) -> FleetJudge {
        var byPaths: [[String]: [Int]] = [:]
        for (index, host) in hosts.enumerated() { byPaths[knownHosts.paths(for: host), default: []].append(index) }
        var sets = knownHosts.sets
        for (paths, members) in byPaths {
            guard let files = sets[paths] else { continue }
            var lookups: [String] = []
            var retries: [(hostString: String, retry: String)] = []
            for member in members {
                let host = hosts[member]
                let target = target(for: host, peer: nil)
                lookups.append(target.lookup.hostString)
                if let retry = target.lookup.retryString { retries.append((target.lookup.hostString, retry)) }
                for name in target.additionalLookupNames {
                    let extra = LookupName(host: name, port: host.port)
                    lookups.append(extra.hostString)
                    if let retry = extra.retryString { lookups.append(retry) }
                }
            }
            var prepared = files.preparing(lookups: lookups)
            let needed = retries.filter { pair in
                !prepared.entries(matching: pair.hostString).contains { $0.entry.marker == nil }
            }.map(\.retry)
            if !needed.isEmpty { prepared = prepared.preparing(lookups: needed) }
            sets[paths] = prepared
        }
        var prepared = FleetJudge(knownHosts: KnownHostsSets(userFiles: knownHosts.userFiles, globalFiles: knownHosts.globalFiles, sets: sets),
                                  pins: pins, pinMode: pinMode, useAdditionalNames: useAdditionalNames, policies: policies)
        prepared.certificateWarnDays = certificateWarnDays
        prepared.history = history
        prepared.chosenAnchors = chosenAnchors
        prepared.revocationLists = revocationLists
        prepared.sshfpAnswers = sshfpAnswers
        return prepared
    }

    /// How `ssh` would reach and name this host (the peer address matters only with CheckHostIP).
    public func target(for host: InventoryHost, peer: String?, additionalNames: [String]? = nil) -> ConnectionTarget {
        ConnectionTarget(host: host.address, port: host.port, hostKeyAlias: host.hostKeyAlias,
                         checkHostIPAddress: host.sshOptions.checkHostIP == true ? peer : nil,
                         additionalLookupNames: additionalNames ?? (useAdditionalNames ? host.additionalNames : []))
    }

    /// The pin lines that apply to none of these hosts: almost always a typo or a host gone.
    public func pinLinesApplyingToNone(of hosts: [InventoryHost]) -> [PinLine] {
        guard let pins else { return [] }
        var unused = Set(pins.lines.map(\.number))
        for host in hosts where !unused.isEmpty {
            let names = PinSet.names(for: host, lookup: target(for: host, peer: nil).lookup)
            for line in pins.lines(for: names) { unused.remove(line.number) }
        }
        return pins.lines.filter { unused.contains($0.number) }
    }

    /// The host-key algorithms `ssh` offers `host` in its KEXINIT, in its order: its
    /// `HostKeyAlgorithms`, and the key types known_hosts records under the name it looks up moved
    /// first (`order_hostkeyalgs`). Nil when the setting selects nothing. What the probe's
    /// connection shaped like `ssh`'s offers (a `KnownHostsCommand`'s ORDER lines are known only
    /// once it has run on the keys, after the probe).
    public func sshHostKeyAlgorithms(for host: InventoryHost) -> [String]? {
        let recorded = knownHosts.knownHosts(for: host).entries(matching: target(for: host, peer: nil).lookup.hostString)
        return try? HostKeyAlgorithms.offered(host.sshOptions.hostKeyAlgorithms, recorded: recorded)
    }

    /// Judges one probe of one host. `keySharing` counts the hosts presenting each of its keys
    /// that other hosts present too; `now` is seconds since the epoch (certificate validity, pin expiry).
    /// `additionalNames` replaces the names the `--additional-names` extension consults (verify's
    /// `--lookup-name`).
    public func judge(_ host: InventoryHost, _ result: ProbeResult, keySharing: KeySharing = KeySharing(),
                      additionalNames: [String]? = nil, splitView: [SplitViewWitness] = [],
                      now: UInt64 = UInt64(Date().timeIntervalSince1970)) -> JudgedHost {
        switch host.endpoint {
        case .tls: return judgeTLS(host, result, splitView: splitView, now: now)
        case .ssh: break
        }
        let files = knownHosts.knownHosts(for: host)
        let paths = knownHosts.paths(for: host)
        let target = target(for: host, peer: result.peerAddress, additionalNames: additionalNames)
        let lookup = target.lookup
        let recordedForName = files.entries(matching: lookup.hostString)
        let recorded = recordedForName.filter { $0.entry.marker == nil }.map { recordedLine($0, in: files) }
        let command = Self.commandSources(host, result, target: target, options: files.options)
        let names = PinSet.names(for: host, lookup: lookup)
        var (policy, policySource) = policies.policy(for: host, names: names)
        // A document's policy may be stricter than this machine's, never quieter (see `finish`).
        let local = host.policyIsRecorded ? policies.policy(for: host.withoutInventoryPolicy, names: names) : nil
        // Every line ssh compares the key it meets with: plain, @cert-authority and @revoked, under either name it tries.
        let compared = recordedForName.first ?? lookup.retryString.flatMap { files.entries(matching: $0).first }
        let client = try? HostKeyAlgorithms.offered(host.sshOptions.hostKeyAlgorithms, recorded: recordedForName + (command?.order ?? []))
        let unproved = UnprovedKeyRule(sshHostKeyAlgorithms: client, serverHostKeyAlgorithms: result.serverHostKeyAlgorithms,
                                       sshKeyExchangeAlgorithms: KeyExchangeAlgorithms.offered(host.sshOptions.kexAlgorithms),
                                       serverKeyExchangeAlgorithms: result.serverKeyExchangeAlgorithms,
                                       sshConnectionFailure: result.sshConnection?.failure)
        var sshfp: SSHFPFinding?
        func finish(_ status: HostStatus, _ reason: StatusReason, keys: [JudgedKey] = [],
                    algorithm: String? = nil, pin: PinJudgement = PinJudgement(verdict: .unpinned, evidence: []),
                    trustedBy: [TrustBasis] = [], failure: HostFailure? = nil, stricter: [StricterChoice] = []) -> JudgedHost {
            var decision = PolicyDecision(status: status, reason: reason, trustedBy: trustedBy, failure: failure)
            if let compared, status.alarmLevel < 2,
               let gap = unproved.gap(failure: failure, attempts: result.failures, provedKeys: !keys.isEmpty) {
                decision = PolicyDecision(status: .unverified, reason: .keyNotProved(comparedWith: SourceLocation(file: compared.path, line: compared.line)),
                                          failure: gap)
            }
            var standardStatus = status
            if !keys.isEmpty {
                // What ssh alone decides includes a RevokedHostKeys file it cannot use; every policy's answer is overruled after.
                let unusable = revocationLists.unusable(for: host)
                // A validated SSHFP match skips known_hosts and its @revoked lines (a RevokedHostKeys match never gets here).
                let revocable = trustedBy.contains(.dns) ? [] : keys
                let standard = decision.overruled(byRevocationsIn: revocable, unusableList: unusable)
                    .overruled(byCommandFailure: command?.failure)
                standardStatus = standard.status
                decision = policy.decision(PolicyFacts(standard: standard, keys: keys, pin: pin))
                    .overruled(byRevocationsIn: revocable, unusableList: unusable).overruled(byCommandFailure: command?.failure)
                if let local, local.0.identity != policy.identity {
                    let here = local.0.decision(PolicyFacts(standard: standard, keys: keys, pin: pin))
                        .overruled(byRevocationsIn: revocable, unusableList: unusable).overruled(byCommandFailure: command?.failure)
                    if here.status.alarmLevel > decision.status.alarmLevel { (decision, policy, policySource) = (here, local.0, local.1) }
                }
            }
            if let setting = host.sshOptions.unjudged?.first ?? Self.commandNotRun(host, result), decision.status.alarmLevel < 2,
               decision.status != .unreachable, decision.status != .error {
                decision = PolicyDecision(status: .unchecked, reason: .settingNotJudged(setting), trustedBy: [], failure: nil)
            }
            let policyStatus = decision.status
            if !splitView.isEmpty, decision.status != .revoked, decision.status != .changed {
                decision = PolicyDecision(status: .splitView, reason: .splitView, trustedBy: [], failure: nil)
            }
            var judged = JudgedHost(host: host, labels: HostLabels(host), lookup: lookup, knownHostsFiles: paths, probe: result,
                                    status: decision.status, reason: decision.reason, keys: keys, negotiatedAlgorithm: algorithm, pin: pin, trustedBy: decision.trustedBy,
                                    failure: [.error, .unreachable, .unverified].contains(decision.status) ? decision.failure : nil,
                                    recorded: recorded, saveFile: knownHosts.saveFile(for: host),
                                    keySharing: keySharing, stricterThanSSH: stricter)
            judged.policy = policy.identity
            judged.policySource = policySource
            if policyStatus != standardStatus { judged.standardStatus = standardStatus }
            judged.splitView = splitView
            judged.drift = drift(host, result, now: now)
            judged.sshfp = sshfp
            return judged
        }
        guard !result.keys.isEmpty || !result.malformedKeys.isEmpty else {
            let failure = result.failures.first
                ?? ProbeFailure(stage: .keyExchange, code: .other, message: "the probe found no key and reported no failure")
            return finish(Self.failureStatus(failure), .probeFailed, failure: .probe(failure))
        }

        var judge = KnownHostsJudge(knownHosts: files)
        judge.caSignatureAlgorithms = CertificateAcceptance.allowedSignatures(host.sshOptions.caSignatureAlgorithms)
        let judgements = result.keys.indices.map { index in
            var forKey = judge
            forKey.commandLines = command?.perKey[index]
            return forKey.judge(result.keys[index].key, for: target, now: now)
        }
        let recordedTypes = Self.recordedTypes(files, lookup: lookup)

        // Which key ssh meets: its algorithm list for this host (`client`), reordered by known_hosts (and the command's ORDER lines), against the server's.
        let server = result.serverHostKeyAlgorithms
            ?? HostKeyAlgorithms.inferredServerAlgorithms(result.keys) + result.malformedKeys.map(\.algorithm.value)
        let algorithm = client.flatMap { HostKeyAlgorithms.negotiate(client: $0, server: server) }
        var negotiated = algorithm.flatMap { Self.index(ofKeyFor: $0, in: result) }
        // The probe's connection shaped like ssh's proved the key ssh meets: that key decides,
        // whatever the other connections were shown, when it offered ssh's order for the host as
        // judged here (a probe made without the known_hosts order, or before a KnownHostsCommand's
        // ORDER lines, may have met another type: then the inference stands).
        if case .proved(let met)? = result.sshConnection, met.algorithms?.hostKey == algorithm,
           let index = result.keys.firstIndex(where: { $0.key == met.key }) {
            negotiated = index
        }
        // It failed once connected: no key was proved to be the one ssh meets, and none is
        // inferred from the other connections (which a relay may have shown another machine).
        let decidingFailure: ProbeFailure? = if case .failed(let failure)? = result.sshConnection, case .ssh = failure.stage {
            failure
        } else {
            nil
        }
        if decidingFailure != nil { negotiated = nil }

        let pin = PinJudgement.judge(keys: result.keys.map(\.key), names: names, certificateName: lookup.name,
                                     pins: pins, mode: pinMode, now: now, meets: negotiated.map { result.keys[$0].key })
        let minimumRSABits = max(1024, host.sshOptions.requiredRSASize ?? 0)
        var keys: [JudgedKey] = []
        for (index, discovered) in result.keys.enumerated() {
            var judgement = judgements[index]
            if case .success(let revocation?) = revocationLists.check(discovered.key, for: host) { judgement.revoke(by: revocation) }
            let isNegotiated = index == negotiated
            let key = discovered.key
            let unusable: UnusableKey? = key.kind.plain == .rsa && (key.isCertificate ? (try? HostCertificate(key))?.key.bits ?? 0 : key.bits) < minimumRSABits
                ? .rsaKeyTooShort : nil
            // Another type recorded makes OpenSSH call a key "changed"; but ssh never asks about a key
            // it does not meet, nor about one it refuses before known_hosts (RSA under 1024 bits).
            let asked = isNegotiated && unusable == nil
            let typeRecorded = recordedTypes.contains(key.kind.plain.name)
                || (command?.perKey[index].host ?? []).contains { $0.entry.marker == nil && ($0.entry.key.hostKey?.kind.plain.name ?? $0.entry.key.typeName) == key.kind.plain.name }
            if judgement.verdict == .changed, !asked, !typeRecorded { judgement.verdict = .notRecorded }
            if judgement.plainKeyVerdict == .changed, !asked, !typeRecorded { judgement.plainKeyVerdict = .notRecorded }
            let instead = judgement.evidence.filter { $0.role == .differentKey || $0.role == .addressDifferentKey }
                .map { RecordedLine(location: SourceLocation(file: $0.path, line: $0.line), fingerprint: $0.fingerprint,
                                    keyType: KeyType(name: KeyType.canonicalName($0.keyType)),
                                    text: command?.lineText(path: $0.path, line: $0.line) ?? files.lineText(path: $0.path, line: $0.line)) }
            let certificate = key.isCertificate ? try? HostCertificate(key) : nil
            var judged = JudgedKey(discovered: discovered, malformed: nil, judgement: judgement, certificate: certificate,
                                   pin: pin.verdict(for: key), isNegotiated: isNegotiated, unusable: unusable, recordedInstead: instead)
            if let certificate, judgement.verdict != .invalidCertificate {
                let vouched = judgement.certificateProblem != .unknownCA
                    || pin.pinnedAuthorities.contains(certificate.signatureKey.fingerprint)
                judged.audit = CertificateAudit(certificate, name: lookup.name, vouched: vouched, warnDays: certificateWarnDays, now: now)
            }
            keys.append(judged)
        }
        for (offset, malformed) in result.malformedKeys.enumerated() {
            keys.append(JudgedKey(discovered: nil, malformed: malformed, judgement: nil, certificate: nil, pin: pin.verdict(for: nil),
                                  isNegotiated: negotiated == result.keys.count + offset, unusable: nil, recordedInstead: []))
        }

        var stricter = Array(Set(keys.compactMap { $0.judgement?.stricterThanSSH })).sorted { $0.rawValue < $1.rawValue }
        func note(_ choice: StricterChoice, unless index: Int) {
            if index != negotiated, !stricter.contains(choice) { stricter.append(choice) }
        }
        func alarm(_ verdict: KeyVerdict) -> Int? {
            keys.firstIndex { $0.says(verdict) }
        }
        sshfp = sshfpFinding(host, result, negotiated: negotiated)
        let listRevokes = keys.contains { $0.says(.revoked) && $0.judgement?.evidence.first?.role == .revokedHostKeys }
        if sshfp?.verdict == .validatedMatch, sshfp?.mode == .yes, !listRevokes, pin.verdict != .mismatch, client != nil, let algorithm,
           let negotiated, keys[negotiated].unusable == nil {
            // `verify_host_key`: after RevokedHostKeys, a validated match accepts the (plain) key before known_hosts
            // is read, so a CHANGED or @revoked line there does not count.
            return finish(.trusted, .trusted(key: negotiated), keys: keys, algorithm: algorithm, pin: pin,
                          trustedBy: [.dns] + (pin.verdict == .matched ? [.pin] : []), stricter: stricter)
        }
        if Self.exemptAsLocalhost(host, result), pin.verdict != .mismatch, client != nil, let algorithm, let negotiated,
           keys[negotiated].unusable == nil {
            return finish(.trusted, .trusted(key: negotiated), keys: keys, algorithm: algorithm, pin: pin,
                          trustedBy: [.localhostExemption] + (pin.verdict == .matched ? [.pin] : []), stricter: stricter)
        }
        if let index = alarm(.revoked) {
            note(.keyNotNegotiated, unless: index)
            return finish(.revoked, .keyRevoked(key: index), keys: keys, algorithm: algorithm, pin: pin, stricter: stricter)
        }
        if let index = alarm(.changed) {
            note(.keyNotNegotiated, unless: index)
            if keys[index].unusable != nil, !stricter.contains(.unusableKeyChanged) { stricter.append(.unusableKeyChanged) }
            return finish(.changed, .keyChanged(key: index), keys: keys, algorithm: algorithm, pin: pin, stricter: stricter)
        }
        if let index = alarm(.ipMismatch) {
            return finish(.changed, .addressRecordsOtherKey(key: index), keys: keys, algorithm: algorithm,
                          pin: pin, stricter: stricter)
        }
        if pin.verdict == .mismatch {
            return finish(.pinMismatch, .pinMismatch, keys: keys, algorithm: algorithm, pin: pin, stricter: stricter)
        }
        if let index = keys.firstIndex(where: { $0.verdict == .invalidCertificate }) {
            note(.certificateNotNegotiated, unless: index)
            return finish(.invalidCertificate, .invalidCertificate(key: index), keys: keys,
                          algorithm: algorithm, pin: pin, stricter: stricter)
        }
        func refused(_ reason: StatusReason, _ refusal: KeyRefusal) -> JudgedHost {
            finish(.error, reason, keys: keys, algorithm: algorithm, pin: pin,
                   failure: .keyRefused(refusal), stricter: stricter)
        }
        guard client != nil else {
            return refused(.badHostKeyAlgorithms, .hostKeyAlgorithmsSelectNothing(setting: host.sshOptions.hostKeyAlgorithms?.description ?? ""))
        }
        guard let algorithm else {
            return refused(.noMatchingHostKeyType, .noCommonAlgorithm(serverOffers: Array(server.prefix(12))))
        }
        guard let negotiated else {
            // The connection shaped like ssh's failed: its failure is the host's, not a key type
            // the other connections did not fetch.
            if let failure = decidingFailure {
                return finish(Self.failureStatus(failure), .probeFailed, keys: keys, algorithm: algorithm, pin: pin,
                              failure: .probe(failure), stricter: stricter)
            }
            return refused(.negotiatedKeyNotProbed(algorithm: algorithm), .negotiatedKeyNotProbed(algorithm: algorithm))
        }
        let met = keys[negotiated]
        if let unusable = met.unusable {
            return refused(.negotiatedKeyUnusable(key: negotiated, unusable), .rsaKeyTooShort(bits: met.key?.bits ?? 0, minimumBits: minimumRSABits))
        }
        guard let judgement = met.judgement, met.verdict.isTrusted else {
            return finish(.new, .nothingRecorded(key: negotiated), keys: keys, algorithm: algorithm, pin: pin,
                          stricter: stricter)
        }
        var basis: [TrustBasis] = [judgement.verdict == .trustedByCA ? .certificateAuthority : .knownHosts]
        if judgement.viaBareNameRetry { basis.append(.bareName) }
        if judgement.viaAdditionalName != nil { basis.append(.additionalName) }
        if pin.verdict == .matched { basis.append(.pin) }
        return finish(.trusted, .trusted(key: negotiated), keys: keys, algorithm: algorithm, pin: pin,
                      trustedBy: basis, stricter: stricter)
    }

    /// `NoHostAuthenticationForLocalhost yes` (`check_host_key`): `ssh` accepts whatever key a
    /// loopback peer it reached directly presents, before reading known_hosts, unless
    /// `HostKeyAlias` is set. Behind a route `ssh` knows no peer address, so it checks as usual.
    /// `RevokedHostKeys`, checked before, still refuses (the revocation overrule in `finish`).
    static func exemptAsLocalhost(_ host: InventoryHost, _ result: ProbeResult) -> Bool {
        guard host.sshOptions.noHostAuthenticationForLocalhost == true, host.hostKeyAlias == nil, let peer = result.peerAddress else {
            return false
        }
        return LookupName.isLoopback(peer)
    }

    /// What the host name's SSHFP records say about the proved keys, for a host whose
    /// `VerifyHostKeyDNS` asks `ssh` to read them.
    private func sshfpFinding(_ host: InventoryHost, _ result: ProbeResult, negotiated: Int?) -> SSHFPFinding? {
        guard let name = SSHFPQuery.name(for: host), let mode = host.sshOptions.verifyHostKeyDNS else { return nil }
        let answer = sshfpAnswers[name] ?? .none(why: "not looked up")
        return SSHFPFinding.judge(answer, name: name, mode: mode, keys: result.keys.map(\.key), negotiated: negotiated)
    }

    /// How the probe's keys moved against the history; nil without one or without keys.
    private func drift(_ host: InventoryHost, _ result: ProbeResult, now: UInt64) -> HostDrift? {
        guard let history, !result.keys.isEmpty else { return nil }
        let presented = result.keys.map { KeyIdentity(type: $0.key.type, fingerprint: $0.key.sha256Fingerprint) }
        return HostDrift.judge(presented: presented, offered: result.serverHostKeyAlgorithms, complete: result.failures.isEmpty,
                               history: history.hosts[host.historyKey], now: now * 1000)
    }

    /// A host with no keys: unreachable when nothing answered, error when something did but
    /// not as an SSH server we could verify.
    public static func failureStatus(_ failure: ProbeFailure) -> HostStatus {
        switch failure.stage {
        case .common(.resolve), .common(.connect): return .unreachable
        case .common(.proxy): return failure.code == .hopUnreachable ? .unreachable : .error
        case .common(.cancelled): return .error
        case .ssh(.banner): return failure.code == .bannerTimeout ? .unreachable : .error
        case .ssh(.keyExchange), .ssh(.hostKey): return .error
        case .tls(.handshake): return failure.code == .tlsTimeout ? .unreachable : .error
        }
    }

    /// The index (keys first, then malformed keys) of the key a negotiated algorithm selects.
    static func index(ofKeyFor algorithm: String, in result: ProbeResult) -> Int? {
        let canonical = KeyType.canonicalName(algorithm)
        if let index = result.keys.firstIndex(where: { $0.key.type == canonical }) { return index }
        return result.malformedKeys.firstIndex { KeyType.canonicalName($0.algorithm.value) == canonical }
            .map { result.keys.count + $0 }
    }

    /// Plain key types with unmarked lines for the lookup (or, on a non-22 port with nothing
    /// recorded for `[host]:port`, for the bare name that `ssh` would retry).
    static func recordedTypes(_ knownHosts: KnownHosts, lookup: LookupName) -> Set<String> {
        var matches = knownHosts.entries(matching: lookup.hostString)
        if matches.isEmpty, let retry = lookup.retryString { matches = knownHosts.entries(matching: retry) }
        return Set(matches.filter { $0.entry.marker == nil }.map { entry -> String in
            entry.entry.key.hostKey?.kind.plain.name ?? entry.entry.key.typeName
        })
    }

    private func recordedLine(_ match: KnownHosts.Match, in files: KnownHosts) -> RecordedLine {
        RecordedLine(location: SourceLocation(file: match.path, line: match.line), fingerprint: match.entry.key.fingerprint,
                     keyType: match.entry.key.hostKey?.kind,
                     text: files.lineText(match))
    }
}
