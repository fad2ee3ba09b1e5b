/// Everything fleettrust concludes about one host from one probe: the one value every output
/// renders (scan JSON, table and known-hosts lines, the dashboard row, detail and confirmation
/// views, replay, verify and the audit log).
///
/// It is made by `FleetJudge.judge` alone, purely, from the inventory host, the probe result and
/// the trust files. It holds typed facts (per-key verdicts with their evidence, certificate
/// findings, the pin answer, which key `ssh` would meet, the failure) and one `status` computed
/// from them by the precedence documented on `status`. Renderers choose words and colours; they
/// never decide. Every piece of text in it that came from outside is `CleanText`.
public struct JudgedHost: Hashable, Sendable {
    /// The host as the inventory gave it (for writers and connect, which need the raw values).
    public let host: InventoryHost
    /// The host's names and places, cleaned for display.
    public let labels: HostLabels
    /// The names `ssh` looks the host up under.
    public let lookup: LookupName
    /// The known_hosts files judged against for this host (its own `UserKnownHostsFile` and
    /// `GlobalKnownHostsFile` when its configuration names them).
    public let knownHostsFiles: [String]
    /// The probe this judgement is of.
    public let probe: ProbeResult
    /// How `ssh` reaches the host, hop by hop (direct when empty): the probe went the same way,
    /// and a failure of a hop is the host's failure with stage `proxy`.
    public var route: HostRoute { host.route }

    /// The precedence, loudest first: no key proved → `unreachable` or `error` (by the failure's
    /// stage), or `unverified` when known_hosts records keys for the host and `ssh` would not fail
    /// the same way (`UnprovedKeyRule`, which also turns a refusal below into `unverified`); any key revoked → `revoked`; any key changed (or its address recorded with another
    /// key) → `changed`; pins apply and no key matches → `pin-mismatch`; any invalid certificate →
    /// `invalid-certificate`; `ssh` could use none of the keys → `error` (stage `host-key`); the
    /// key `ssh` meets is trusted → `trusted`; else `new`. Between `changed` and `pin-mismatch`:
    /// another scanner proved other keys for the host → `split-view`.
    public let status: HostStatus
    /// Why the status is what it is, as a fact a renderer can put into words.
    public let reason: StatusReason
    /// Every key the server proved it holds (and every malformed certificate it sent), in probe order.
    public let keys: [JudgedKey]
    /// Index into `keys` of the key `ssh` would meet, when it would meet one this probe fetched
    /// (the key's own `isNegotiated` is the one stored fact).
    public var negotiated: Int? { keys.firstIndex(where: \.isNegotiated) }
    /// The key types the server offers that the probe asked for and could not fetch, each with
    /// why, when it proved keys (the status stands on the key `ssh` meets; these say the keys
    /// are not all the server's); empty when it proved none, for `failure` says why.
    public var unfetched: [UnfetchedKeyType] { probe.proof.provesSomething ? probe.ssh?.unfetched ?? [] : [] }
    /// The host-key algorithm `ssh` would negotiate, when the server offers one `ssh` accepts.
    public let negotiatedAlgorithm: String?
    /// What the pins say about the host.
    public let pin: PinJudgement
    /// How trust was established, when `status` is `trusted` (several: known_hosts and a pin).
    public let trustedBy: [TrustBasis]
    /// The failure behind `unreachable`, `error` and `unverified`: the probe's, or why `ssh` could
    /// use none of the keys it proved (for `unverified`: what could not be done).
    public let failure: HostFailure?
    /// The unmarked known_hosts lines recorded for the lookup name: what a forget removes and a
    /// replace supersedes, and what a write expects to find still there.
    public let recorded: [RecordedLine]
    /// The file a trust decision appends to (the host's first user known_hosts file).
    public let saveFile: String
    /// How many hosts of the run present each of this host's keys that other hosts present too.
    public let keySharing: KeySharing
    /// Places where this judgement is stricter than `ssh`'s (documented in the README).
    public let stricterThanSSH: [StricterChoice]
    /// The trust policy applied, and where it was set.
    public var policy: PolicyIdentity = .builtIn(.standard)
    public var policySource: PolicySource = .defaultPolicy
    /// What `ssh` would decide (the `standard` policy's answer), when another policy decided.
    public var standardStatus: HostStatus?
    /// How the keys moved since the last recorded probe, and each key's first and last sighting;
    /// nil without a history (`--no-history`, replay) or when the probe proved no key.
    public var drift: HostDrift?
    /// For a TLS endpoint: the chain, its validation, the name check, expiry and the pin match.
    public var tls: TLSJudgement?
    /// Recorded probes: the other scanners that proved other keys for this host (`split-view`,
    /// unless a louder status wins).
    public var splitView: [SplitViewWitness] = []
    /// What the host name's SSHFP records say about the proved keys, when `VerifyHostKeyDNS`
    /// has `ssh` read them.
    public var sshfp: SSHFPFinding?

    /// Which protocol the endpoint speaks (`ssh` hosts, `tls` endpoints).
    public var endpointProtocol: EndpointProtocol { host.endpointProtocol }

    public init(host: InventoryHost, labels: HostLabels, lookup: LookupName, knownHostsFiles: [String], probe: ProbeResult,
                status: HostStatus, reason: StatusReason, keys: [JudgedKey], negotiatedAlgorithm: String?,
                pin: PinJudgement, trustedBy: [TrustBasis], failure: HostFailure?, recorded: [RecordedLine],
                saveFile: String, keySharing: KeySharing, stricterThanSSH: [StricterChoice]) {
        self.host = host
        self.labels = labels
        self.lookup = lookup
        self.knownHostsFiles = knownHostsFiles
        self.probe = probe
        self.status = status
        self.reason = reason
        self.keys = keys
        self.negotiatedAlgorithm = negotiatedAlgorithm
        self.pin = pin
        self.trustedBy = trustedBy
        self.failure = failure
        self.recorded = recorded
        self.saveFile = saveFile
        self.keySharing = keySharing
        self.stricterThanSSH = stricterThanSSH
    }

    /// The key `ssh` would meet.
    public var negotiatedKey: JudgedKey? { keys.first(where: \.isNegotiated) }

    /// The host's known_hosts answer in one word: an alarm about any key wins (revoked, changed,
    /// address recorded with another key, invalid certificate, in that order), else the answer
    /// for the key `ssh` meets; nil when it meets none of the keys.
    public var knownHostsAnswer: KeyVerdict? {
        for verdict in [KeyVerdict.revoked, .changed, .ipMismatch, .invalidCertificate] where keys.contains(where: { $0.says(verdict) }) {
            return verdict
        }
        return negotiatedKey?.verdict
    }

    /// Days until the first of the host's certificates expires; nil when none of its
    /// certificates expires (or it presented none).
    public var certificateDaysLeft: Int? { keys.compactMap { $0.audit?.expiresInDays }.min() }

    /// What a replace of a changed host writes and removes; nil unless `saving` is `replace`.
    public var replacement: Replacement? {
        guard saving == .replace else { return nil }
        var superseded: [RecordedLine] = []
        for line in keys.flatMap(\.recordedInstead) where !superseded.contains(line) { superseded.append(line) }
        let replacing = keys.compactMap { key -> HostKey? in
            guard let plain = key.key, !plain.isCertificate, key.unusable == nil,
                  key.verdict != .revoked, key.verdict != .invalidCertificate else { return nil }
            return plain
        }
        return Replacement(keys: replacing, superseded: superseded)
    }

    /// The keys a replace records for a changed host (its plain, usable keys that are neither
    /// revoked nor invalid certificates), and the lines recording other keys that it supersedes.
    public struct Replacement: Hashable, Sendable {
        public let keys: [HostKey]
        public let superseded: [RecordedLine]
    }

    /// The names a new known_hosts entry is written under: what `ssh` looks up.
    public var saveNames: [String] { [lookup.hostString] }

    /// What a trust decision may do with this host: only a `new` host's usable plain keys are
    /// ever offered for saving, so no output can offer a revoked, changed, forged or unusable key,
    /// nor one the pins disagree with (also in `--pins-mode report`).
    public var saving: Saving {
        if host.endpointProtocol != .ssh { return .refused(.notSSH) }
        if pin.verdict == .reportedMismatch { return .refused(.pinMismatch) }
        if !splitView.isEmpty { return .refused(.splitView) }
        if host.sshOptions.noUserKnownHostsFile == true, status == .new || status == .changed { return .refused(.nothingToSave) }
        switch status {
        case .new:
            let keys = keys.compactMap { judged -> HostKey? in
                guard let key = judged.key, !key.isCertificate, judged.unusable == nil, !judged.verdict.isAlarm else { return nil }
                return key
            }
            return keys.isEmpty ? .refused(.nothingToSave) : .save(keys)
        case .trusted: return .refused(.alreadyTrusted)
        case .changed: return .replace
        case .splitView: return .refused(.splitView)
        case .revoked: return .refused(.revoked)
        case .pinMismatch: return .refused(.pinMismatch)
        case .invalidCertificate: return .refused(.invalidCertificate)
        case .unpinned: return .refused(.notPinned)
        case .unchecked: return .refused(.unchecked)
        case .pending: return .refused(.notProbedYet)
        case .unreachable, .error: return .refused(.noUsableKey)
        case .unverified: return .refused(.unverified)
        case .untrusted, .expired, .nameMismatch: return .refused(.notSSH)
        }
    }

    public enum Saving: Hashable, Sendable {
        /// These keys may be saved after the person confirms them.
        case save([HostKey])
        /// A changed key: only a replace, confirmed by typing the host name.
        case replace
        case refused(SaveRefusal)
    }

    public enum SaveRefusal: String, Hashable, Sendable {
        case alreadyTrusted = "already-trusted", revoked, pinMismatch = "pin-mismatch"
        case invalidCertificate = "invalid-certificate", notProbedYet = "not-probed", noUsableKey = "no-usable-key"
        case nothingToSave = "nothing-to-save", notPinned = "not-pinned", unchecked
        /// A TLS endpoint has no known_hosts entry; its trust is a pin (`t` adds the SPKI pin).
        case notSSH = "not-ssh"
        /// Scanners in different networks proved different keys: which one is the host is unknown.
        case splitView = "split-view"
        /// The key `ssh` would meet was not proved, and known_hosts records keys for the host.
        case unverified
        /// None of the proved keys is one `ssh` would meet (nor one a pin names): trust on first
        /// use saves only what `ssh -o StrictHostKeyChecking=accept-new` would (`FirstUseKeys`).
        case noKeySSHMeets = "no-key-ssh-meets"
    }
}

/// A host's names and places, cleaned once for display.
public struct HostLabels: Hashable, Sendable {
    public let name: CleanText
    public let address: CleanText
    /// `address:port`, or `[address]:port` for IPv6 literals.
    public let endpoint: CleanText
    public let user: CleanText?
    /// Its groups and the groups those belong to, in order, each once.
    public let groups: [CleanText]
    public let hostKeyAlias: CleanText?

    public init(_ host: InventoryHost) {
        name = CleanText(host.name)
        address = CleanText(host.address)
        endpoint = CleanText(host.endpointLabel, limit: 300)
        user = host.user.map { CleanText($0, limit: 64) }
        var seen = Set<String>()
        groups = (host.groups + host.inheritedGroups).filter { seen.insert($0).inserted }.map { CleanText($0, limit: 128) }
        hostKeyAlias = host.hostKeyAlias.map { CleanText($0) }
    }
}

/// One key the server proved it holds, and what each source of trust says about it.
public struct JudgedKey: Hashable, Sendable {
    /// The key as probed; nil for a certificate the server sent that cannot be decoded.
    public let discovered: DiscoveredKey?
    /// A certificate that cannot be decoded, kept as sent.
    public let malformed: MalformedHostKey?
    /// OpenSSH's answer with its evidence (for an invalid certificate: about the key it
    /// certifies); nil only for a certificate that cannot be decoded.
    public let judgement: KeyJudgement?
    /// The certificate's fields, when the key is a decodable certificate.
    public let certificate: HostCertificate?
    /// What the pins say about this key.
    public let pin: PinVerdict
    /// Whether `ssh` would meet this key.
    public let isNegotiated: Bool
    /// Why `ssh` could not use this key, if it could not.
    public let unusable: UnusableKey?
    /// For a changed key: the lines that record another key instead.
    public let recordedInstead: [RecordedLine]
    /// For a decodable certificate: days left and warnings.
    public var audit: CertificateAudit?

    public init(discovered: DiscoveredKey?, malformed: MalformedHostKey?, judgement: KeyJudgement?,
                certificate: HostCertificate?, pin: PinVerdict, isNegotiated: Bool, unusable: UnusableKey?,
                recordedInstead: [RecordedLine]) {
        self.discovered = discovered
        self.malformed = malformed
        self.judgement = judgement
        self.certificate = certificate
        self.pin = pin
        self.isNegotiated = isNegotiated
        self.unusable = unusable
        self.recordedInstead = recordedInstead
    }

    public var key: HostKey? { discovered?.key }

    /// The verdict (see `KeyVerdict`): the judgement's, and `invalid-certificate` for a
    /// certificate that cannot be decoded.
    public var verdict: KeyVerdict { judgement?.verdict ?? .invalidCertificate }

    /// Why a certificate was not accepted through a CA (or is invalid).
    public var certificateProblem: CertificateProblem? { judgement?.certificateProblem ?? (malformed != nil ? .undecodable : nil) }

    /// Whether this key says `verdict`: itself, or (for an invalid certificate) the key it certifies.
    public func says(_ verdict: KeyVerdict) -> Bool { self.verdict == verdict || judgement?.plainKeyVerdict == verdict }

    /// Whether this key is an alarm: its own verdict is, or the key an invalid certificate certifies is.
    public var isAlarm: Bool { verdict.isAlarm || (judgement?.plainKeyVerdict?.isAlarm ?? false) }

    /// The type name as shown (`ssh-ed25519`, `…-cert-v01@openssh.com`).
    public var typeName: String { key?.type ?? malformed?.algorithm.value ?? "?" }

    /// Whether the server sent a certificate (one that cannot be decoded is one too).
    public var isCertificate: Bool { key?.isCertificate ?? (malformed != nil) }
}

/// Why `ssh` cannot use a key it would otherwise meet.
public enum UnusableKey: String, Hashable, Sendable, Codable {
    /// RSA under 1024 bits: `ssh` says "Invalid key length".
    case rsaKeyTooShort = "rsa-key-too-short"
}

/// How a trusted host's trust was established.
public enum TrustBasis: String, Hashable, Sendable, Codable, CaseIterable {
    /// known_hosts records the key `ssh` meets.
    case knownHosts = "known-hosts"
    /// A `@cert-authority` line's CA signed the certificate `ssh` meets.
    case certificateAuthority = "cert-authority"
    /// Found under the bare name `ssh` retries for a non-22 port.
    case bareName = "bare-name"
    /// Found under an additional name (the `--additional-names` extension).
    case additionalName = "additional-name"
    /// A pin in force matched one of the host's keys.
    case pin
    /// A certificate valid for the host, signed by a CA pinned for it (TLS: a pin matched a
    /// certificate of the chain above the leaf).
    case caPin = "ca-pin"
    /// TLS: the chain validates to a trusted CA and the leaf names the endpoint.
    case certificateChain = "certificate-chain"
    /// `NoHostAuthenticationForLocalhost`: `ssh` accepts any key from a loopback peer.
    case localhostExemption = "no-host-authentication-for-localhost"
    /// `VerifyHostKeyDNS yes`: an SSHFP record the resolver validated (DNSSEC) matches the key.
    case dns
}

/// Why a host has its status: the fact behind it, for renderers to word.
public enum StatusReason: Hashable, Sendable {
    case notProbed
    /// No key was proved: the probe failed at this stage.
    case probeFailed
    case keyRevoked(key: Int)
    case keyChanged(key: Int)
    /// CheckHostIP: the address is recorded with another key.
    case addressRecordsOtherKey(key: Int)
    case pinMismatch
    case invalidCertificate(key: Int)
    /// `ssh` and the server share no host-key algorithm.
    case noMatchingHostKeyType
    case negotiatedKeyUnusable(key: Int, UnusableKey)
    /// `ssh` would negotiate an algorithm whose key the probe did not fetch.
    case negotiatedKeyNotProbed(algorithm: String)
    /// The per-host `HostKeyAlgorithms` setting selects nothing: `ssh` would not start.
    case badHostKeyAlgorithms
    case nothingRecorded(key: Int)
    case trusted(key: Int)
    /// Policies: no pin applies (or it expired); the pin decided; a pinned CA's certificate
    /// decided, or none was presented; nothing was checked.
    case notPinned
    case pinMatched
    case certificateFromPinnedCA(key: Int)
    case noCertificateFromPinnedCA
    case unchecked
    /// A setting in force for the host changes `ssh`'s decision in a way fleettrust does not
    /// reproduce (`KnownHostsCommand`, a `Match exec` block…): nothing is claimed.
    case settingNotJudged(UnjudgedSetting)
    /// TLS: the chain validates and names the endpoint; leads to no trusted CA; has a
    /// certificate outside its validity; does not name the endpoint.
    case chainTrusted
    case chainUntrusted
    case certificateOutOfValidity
    case nameMismatch
    /// Another scanner proved other keys for the host (`JudgedHost.splitView` names them).
    case splitView
    /// known_hosts records keys for the host (this line first) and the probe did not prove the key
    /// `ssh` would meet: the failure (`JudgedHost.failure`) says what could not be done.
    case keyNotProved(comparedWith: SourceLocation)
}

/// A known_hosts line as found on disk: where it is, and the key it records.
public struct RecordedLine: Hashable, Sendable {
    public var location: SourceLocation
    public var fingerprint: String
    /// The type of the key the line records, when OpenSSH reads it as a key.
    public var keyType: KeyType?
    /// The line itself, cleaned, for confirmations that show what will go.
    public var text: CleanText

    public init(location: SourceLocation, fingerprint: String, keyType: KeyType? = nil, text: String) {
        self.location = location
        self.fingerprint = fingerprint
        self.keyType = keyType
        self.text = CleanText(text, limit: 300)
    }
}
