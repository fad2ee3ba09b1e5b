/// The judge's TLS half: one TLS endpoint's recorded handshake into the same `JudgedHost` an SSH
/// host becomes, with the same pins, policies and clock.
///
/// Precedence, loudest first: no certificate recorded → `unreachable` or `error` (by the
/// failure's stage); pins apply and none matches a certificate of the chain → `pin-mismatch`;
/// the leaf does not name the endpoint → `name-mismatch`; a certificate is outside its validity
/// → `expired`; the chain leads to no trusted CA → `untrusted`; else `trusted`. Then the policy:
/// `pinned` makes a trusted endpoint with no pin in force `unpinned`; `pin-only` ignores chain,
/// name and validity and lets the pin alone decide (`trusted`, `pin-mismatch` or `unpinned`);
/// `off` is `unchecked`; `ca` and custom policies judge a TLS endpoint as `pinned` and
/// `standard` respectively.
extension FleetJudge {
    func judgeTLS(_ host: InventoryHost, _ result: ProbeResult, splitView: [SplitViewWitness], now: UInt64) -> JudgedHost {
        let lookup = LookupName(host: host.address, port: host.port)
        let names = PinSet.names(for: host, lookup: lookup)
        let (policy, policySource) = policies.policy(for: host, names: names)
        func finish(_ status: HostStatus, _ reason: StatusReason, pin: PinJudgement = PinJudgement(verdict: .unpinned, evidence: []),
                    trustedBy: [TrustBasis] = [], failure: HostFailure? = nil, tls: TLSJudgement? = nil,
                    standard: HostStatus? = nil) -> JudgedHost {
            // Another scanner met another leaf key (or a failed upgrade) where this one proved a chain, or
            // the reverse: which one is the endpoint is unknown, as for SSH.
            let split = !splitView.isEmpty
            var judged = JudgedHost(host: host, labels: HostLabels(host), lookup: lookup, knownHostsFiles: [], probe: result,
                                    status: split ? .splitView : status, reason: split ? .splitView : reason, keys: [], negotiatedAlgorithm: nil,
                                    pin: pin, trustedBy: split ? [] : trustedBy, failure: split ? nil : failure, recorded: [],
                                    saveFile: pins?.path ?? "", keySharing: KeySharing(), stricterThanSSH: [])
            judged.policy = policy.identity
            judged.policySource = policySource
            judged.tls = tls
            judged.splitView = splitView
            if let standard, standard != status { judged.standardStatus = standard }
            return judged
        }
        guard let handshake = result.tls else {
            let failure = result.failures.first
                ?? ProbeFailure(stage: .tlsHandshake, code: .other, message: "the probe recorded no handshake and no failure")
            return finish(Self.failureStatus(failure), .probeFailed, failure: .probe(failure))
        }
        var certificates: [TLSCertificate] = []
        var unreadable: [CleanText] = []
        for der in handshake.chain {
            do { certificates.append(try TLSCertificate(der: der)) } catch { unreadable.append(CleanText(error.description)) }
        }
        guard let leafDER = handshake.chain.first, let leaf = try? TLSCertificate(der: leafDER) else {
            let failure = ProbeFailure(stage: .tlsHandshake, code: .noCertificate,
                                       message: unreadable.first.map { "the server's certificate cannot be read: \($0)" }
                                           ?? "the server sent no certificate")
            return finish(.error, .probeFailed, failure: .probe(failure))
        }
        let chain = TLSChainCheck.check(chain: handshake.chain, anchors: tlsAnchors)
        // The row's own name, never the address it was reached at nor a recorded SNI; a name no
        // certificate can carry (the inventory refuses such a host) matches nothing.
        let hostName = TLSEndpoint.hostName(ofRow: host.name)
        let reference = TLSEndpoint.referenceIdentity(for: hostName)
        let checkedName = reference ?? hostName
        let nameMatches = reference.map { TLSChainCheck.leafNames(leaf.der, $0) } ?? false
        let everyCertificate = certificates + chain.built.filter { built in !certificates.contains { $0.sha256 == built.sha256 } }
        let now64 = Int64(clamping: now)
        let outOfValidity = everyCertificate.first { now64 < $0.notBefore || now64 > $0.notAfter }
        let leafDays = TLSJudgement.days(until: leaf.notAfter, now: now)
        let earliest = everyCertificate.map(\.notAfter).min() ?? leaf.notAfter
        let chainDays = TLSJudgement.days(until: earliest, now: now)

        var warnings: [CertificateWarning] = []
        if let outOfValidity { warnings.append(now64 < outOfValidity.notBefore ? .notYetValid : .expired) }
        if outOfValidity == nil, earliest - now64 < Int64(certificateWarnDays) * 86_400 { warnings.append(.expiresSoon) }
        if certificates.contains(where: \.hasWeakKey) { warnings.append(.weakKey) }
        if certificates.contains(where: { $0.signedWithSHA1 && !$0.selfSigned }) { warnings.append(.sha1Signature) }

        // Pins bind to the validated path: a certificate the server merely appended proves nothing,
        // so when the chain does not validate only the leaf's key can satisfy a pin.
        let pinnable = chain.validates ? chain.built : [leaf]
        let (pin, pinned) = Self.judgeSPKIPins(pinnable, names: names, pins: pins, mode: pinMode, now: now)
        let facts = TLSJudgement(handshake: handshake, certificates: certificates, unreadable: unreadable, chain: chain,
                                 anchorsSource: tlsAnchors.source, checkedName: checkedName, nameMatches: nameMatches,
                                 outOfValidity: outOfValidity, leafExpiresInDays: leafDays, chainExpiresInDays: chainDays,
                                 warnings: warnings, pinnedCertificate: pinned)
        var pinBasis: [TrustBasis] = []
        if let pinned { pinBasis = [pinned.sha256 == leaf.sha256 ? .pin : .caPin] }

        let standard: (HostStatus, StatusReason)
        if pin.verdict == .mismatch {
            standard = (.pinMismatch, .pinMismatch)
        } else if !nameMatches {
            standard = (.nameMismatch, .nameMismatch)
        } else if outOfValidity != nil {
            standard = (.expired, .certificateOutOfValidity)
        } else if !chain.validates {
            standard = (.untrusted, .chainUntrusted)
        } else {
            standard = (.trusted, .chainTrusted)
        }
        let standardBasis: [TrustBasis] = standard.0 == .trusted ? [.certificateChain] + pinBasis : []
        switch policy.identity.builtIn {
        case .off:
            return finish(.unchecked, .unchecked, pin: pin, tls: facts, standard: standard.0)
        case .pinOnly:
            switch pin.verdict {
            case .matched: return finish(.trusted, .pinMatched, pin: pin, trustedBy: pinBasis, tls: facts, standard: standard.0)
            case .mismatch: return finish(.pinMismatch, .pinMismatch, pin: pin, tls: facts, standard: standard.0)
            case .unpinned, .expired, .reportedMismatch, .notListed:
                return finish(.unpinned, .notPinned, pin: pin, tls: facts, standard: standard.0)
            }
        case .pinned, .ca:
            if standard.0 == .trusted, pin.verdict != .matched {
                return finish(.unpinned, .notPinned, pin: pin, tls: facts, standard: standard.0)
            }
            return finish(standard.0, standard.1, pin: pin, trustedBy: standardBasis, tls: facts)
        case .standard, .none:
            return finish(standard.0, standard.1, pin: pin, trustedBy: standardBasis, tls: facts)
        }
    }

    /// The SPKI pins in force for the endpoint against the certificates given (the validated
    /// chain up to the anchor, or the leaf alone): matched when any one's key is pinned. Only pin lines carrying
    /// `pin-sha256:` entries apply to TLS endpoints.
    static func judgeSPKIPins(_ certificates: [TLSCertificate], names: [String], pins: PinSet?, mode: PinMode,
                              now: UInt64) -> (PinJudgement, TLSCertificate?) {
        guard let pins else { return (PinJudgement(verdict: .unpinned, evidence: []), nil) }
        let applicable = pins.lines(for: names).filter { !$0.spkiPins.isEmpty }
        if applicable.isEmpty { return (PinJudgement(verdict: .unpinned, evidence: []), nil) }
        func evidence(_ lines: [PinLine]) -> [TrustEvidence] {
            lines.flatMap { line in
                line.spkiPins.sorted().map {
                    TrustEvidence(role: .pin, path: pins.path, line: line.number, keyType: "SPKI pin", fingerprint: "pin-sha256:" + $0.description,
                                  hashed: false)
                }
            }
        }
        let active = applicable.filter { !$0.isExpired(at: now) }
        if active.isEmpty { return (PinJudgement(verdict: .expired, evidence: evidence(applicable)), nil) }
        let pinned = active.reduce(into: Set<SPKIPin>()) { $0.formUnion($1.spkiPins) }
        var judgement = PinJudgement(verdict: mode == .enforce ? .mismatch : .reportedMismatch, evidence: evidence(active))
        judgement.pinnedSPKI = pinned
        if let match = certificates.first(where: { $0.spkiPin.map(pinned.contains) ?? false }), let pin = match.spkiPin {
            judgement.verdict = .matched
            judgement.evidence = evidence(active.filter { $0.spkiPins.contains(pin) })
            return (judgement, match)
        }
        return (judgement, nil)
    }
}
