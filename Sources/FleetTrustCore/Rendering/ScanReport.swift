import Foundation

/// The document `fleettrust scan --format json` prints: a rendering of the scan's `JudgedHost`
/// values, field by field, written by `ScanDocumentWriter` one host per line. Encode-only: what
/// reads a document back (`scan --replay`, `merge`, tests) is `RecordedScan`, which refuses
/// what it cannot type instead of guessing.
///
/// It is the contract with cron jobs, CI and auditors, so its field names are stable and
/// documented in docs/scan.md. Every string in it that came from a server or an input file has
/// been cleaned. Version 2 added the negotiation, certificate and per-host ssh facts; version 3
/// the one-host-per-line layout, `scanned_from` / `scanned_at` and the `shared_keys` table.
public struct ScanReport: Sendable {
    public static let currentVersion = 3

    public struct Failure: Codable, Sendable, Equatable {
        public var stage: String
        public var code: FailureCode
        public var message: String

        enum CodingKeys: String, CodingKey, CaseIterable { case stage, code, message }

        public init(stage: String, code: FailureCode, message: String) {
            self.stage = stage
            self.code = code
            self.message = message
        }

        public init(_ failure: ProbeFailure) {
            self.init(stage: failure.stage.rawValue, code: failure.code, message: failure.message.value)
        }

    }

    /// A key type the server offers that the probe asked for and did not get, and why.
    public struct UnfetchedKey: Codable, Sendable, Equatable {
        public var algorithm: String
        public var error: Failure

        enum CodingKeys: String, CodingKey, CaseIterable { case algorithm, error }

        public init(algorithm: String, error: Failure) {
            self.algorithm = algorithm
            self.error = error
        }

        init(_ unfetched: UnfetchedKeyType) {
            self.init(algorithm: unfetched.algorithm.value, error: Failure(unfetched.failure))
        }
    }

    /// The connection shaped like `ssh`'s: the index into `keys` of the key it proved and the
    /// algorithms it negotiated, or its failure.
    public struct SSHConnection: Codable, Sendable, Equatable {
        public var key: Int?
        public var algorithms: NegotiatedAlgorithms?
        public var error: Failure?

        enum CodingKeys: String, CodingKey, CaseIterable { case key, algorithms, error }

        public init(key: Int?, algorithms: NegotiatedAlgorithms?, error: Failure?) {
            self.key = key
            self.algorithms = algorithms
            self.error = error
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(key, forKey: .key)
            try c.encode(algorithms, forKey: .algorithms)
            try c.encode(error, forKey: .error)
        }
    }

    public struct Certificate: Codable, Sendable, Equatable {
        public var ca: String
        public var caKey: String
        public var principals: [String]
        public var serial: UInt64
        public var keyID: String
        public var validAfter: UInt64
        public var validBefore: UInt64
        public var criticalOptions: [String]
        /// Why it was not accepted through a CA (or is invalid); null when accepted.
        public var problem: CertificateProblem?
        /// Whole days until it expires (negative once expired); null when it never expires.
        public var expiresInDays: Int?
        public var warnings: [CertificateWarning]

        enum CodingKeys: String, CodingKey, CaseIterable {
            case ca = "ca_fingerprint", caKey = "ca_key", principals, serial, keyID = "key_id"
            case validAfter = "valid_after", validBefore = "valid_before", criticalOptions = "critical_options", problem
            case expiresInDays = "expires_in_days", warnings
        }

        public init(ca: String, caKey: String, principals: [String], serial: UInt64, keyID: String, validAfter: UInt64,
                    validBefore: UInt64, criticalOptions: [String], problem: CertificateProblem?, expiresInDays: Int?,
                    warnings: [CertificateWarning]) {
            self.ca = ca; self.caKey = caKey; self.principals = principals; self.serial = serial; self.keyID = keyID
            self.validAfter = validAfter; self.validBefore = validBefore; self.criticalOptions = criticalOptions
            self.problem = problem; self.expiresInDays = expiresInDays; self.warnings = warnings
        }

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            ca = try c.decode(String.self, forKey: .ca); caKey = try c.decode(String.self, forKey: .caKey)
            principals = try c.decode([String].self, forKey: .principals); serial = try c.decode(UInt64.self, forKey: .serial)
            keyID = try c.decode(String.self, forKey: .keyID); validAfter = try c.decode(UInt64.self, forKey: .validAfter)
            validBefore = try c.decode(UInt64.self, forKey: .validBefore)
            criticalOptions = try c.decodeIfPresent([String].self, forKey: .criticalOptions) ?? []
            problem = try c.decodeIfPresent(CertificateProblem.self, forKey: .problem)
            expiresInDays = try c.decodeIfPresent(Int.self, forKey: .expiresInDays)
            warnings = try c.decodeIfPresent([CertificateWarning].self, forKey: .warnings) ?? []
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(ca, forKey: .ca); try c.encode(caKey, forKey: .caKey); try c.encode(principals, forKey: .principals)
            try c.encode(serial, forKey: .serial); try c.encode(keyID, forKey: .keyID); try c.encode(validAfter, forKey: .validAfter)
            try c.encode(validBefore, forKey: .validBefore); try c.encode(criticalOptions, forKey: .criticalOptions)
            try c.encode(problem, forKey: .problem); try c.encode(expiresInDays, forKey: .expiresInDays)
            try c.encode(warnings, forKey: .warnings)
        }
    }

    public struct Key: Encodable, Sendable, Equatable {
        public var type: String
        public var bits: Int
        /// SHA256 fingerprint (of the certified key, for a certificate); null for an undecodable one.
        public var fingerprint: String?
        /// The OpenSSH public-key line (`type base64`), as sent.
        public var key: String
        /// See `KeyVerdict`: trusted, trusted-by-ca, new, not-recorded, changed, revoked,
        /// ip-mismatch, invalid-certificate.
        public var verdict: KeyVerdict
        /// For an invalid certificate: the verdict of the key it certifies (which the server did
        /// prove it holds); null otherwise.
        public var plainKeyVerdict: KeyVerdict?
        public var pin: PinVerdict
        /// Whether this is the key `ssh` would meet.
        public var negotiated: Bool
        /// Why `ssh` could not use the key (`rsa-key-too-short`), or null.
        public var unusable: UnusableKey?
        /// One sentence for people, then the file lines behind the verdict.
        public var evidence: [String]
        public var weaknesses: [String]
        public var algorithms: NegotiatedAlgorithms?
        public var handshakeMilliseconds: Double?
        public var certificate: Certificate?
        /// When the history first and last saw this key (RFC 3339, UTC; this probe included);
        /// null without a history.
        public var firstSeen: String?
        public var lastSeen: String?
        /// How many hosts (by name) of the document present this key (for a certificate, the key
        /// it certifies), when two or more do; the names are in the document's `shared_keys`.
        public var sharedBy: Int?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case type, bits, fingerprint, key, verdict, pin, negotiated, unusable, evidence, weaknesses, algorithms, certificate
            case handshakeMilliseconds = "handshake_ms", plainKeyVerdict = "plain_key_verdict"
            case firstSeen = "first_seen", lastSeen = "last_seen", sharedBy = "shared_by"
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(type, forKey: .type); try c.encode(bits, forKey: .bits); try c.encode(fingerprint, forKey: .fingerprint)
            try c.encode(key, forKey: .key); try c.encode(verdict, forKey: .verdict); try c.encode(pin, forKey: .pin)
            try c.encode(plainKeyVerdict, forKey: .plainKeyVerdict)
            try c.encode(negotiated, forKey: .negotiated); try c.encode(unusable, forKey: .unusable)
            try c.encode(evidence, forKey: .evidence); try c.encode(weaknesses, forKey: .weaknesses)
            try c.encode(algorithms, forKey: .algorithms); try c.encode(handshakeMilliseconds, forKey: .handshakeMilliseconds)
            try c.encode(certificate, forKey: .certificate)
            try c.encode(firstSeen, forKey: .firstSeen); try c.encode(lastSeen, forKey: .lastSeen)
            try c.encode(sharedBy, forKey: .sharedBy)
        }
    }

    /// One key type's move since the last recorded probe.
    public struct DriftMove: Codable, Sendable, Equatable {
        public var kind: DriftKind
        public var type: String
        /// The fingerprint last seen for the type, and the one presented now (null: none).
        public var before: String?
        public var now: String?

        enum CodingKeys: String, CodingKey, CaseIterable { case kind, type, before, now }

        public init(_ move: KeyDrift) {
            kind = move.kind
            type = CleanText(move.type, limit: 64).value
            before = move.before
            now = move.now
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(kind, forKey: .kind); try c.encode(type, forKey: .type)
            try c.encode(before, forKey: .before); try c.encode(now, forKey: .now)
        }
    }

    /// The per-host client settings judged with (what replay needs to judge the same way): the
    /// host's `SSHHostOptions` as they are, beside its alias and known_hosts files.
    public struct SSHSettings: Codable, Sendable, Equatable {
        public var hostKeyAlias: String?
        /// The host's own `UserKnownHostsFile` (empty: the scan's files).
        public var userKnownHostsFiles: [String]
        /// Every file the host was judged against, in order.
        public var knownHostsFiles: [String]
        /// `HostKeyAlgorithms`, `GlobalKnownHostsFile`, `CheckHostIP` and the rest, in the same object.
        public var options: SSHHostOptions

        enum CodingKeys: String, CodingKey {
            case hostKeyAlias = "host_key_alias", userKnownHostsFiles = "user_known_hosts_files"
            case knownHostsFiles = "known_hosts_files"
        }

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            hostKeyAlias = try c.decodeIfPresent(String.self, forKey: .hostKeyAlias)
            userKnownHostsFiles = try c.decodeIfPresent([String].self, forKey: .userKnownHostsFiles) ?? []
            knownHostsFiles = try c.decodeIfPresent([String].self, forKey: .knownHostsFiles) ?? []
            options = try SSHHostOptions(from: decoder)
        }

        init(_ judged: JudgedHost) {
            let host = judged.host
            hostKeyAlias = judged.labels.hostKeyAlias?.value
            userKnownHostsFiles = host.userKnownHostsFiles.map { CleanText($0, limit: 1024).value }
            knownHostsFiles = judged.knownHostsFiles.map { CleanText($0, limit: 1024).value }
            options = host.sshOptions
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(hostKeyAlias, forKey: .hostKeyAlias)
            try c.encode(userKnownHostsFiles, forKey: .userKnownHostsFiles)
            try c.encode(knownHostsFiles, forKey: .knownHostsFiles)
            try options.encode(to: encoder)
        }
    }

    /// One hop of a host's route, in the order the connection passes it.
    public struct Hop: Codable, Sendable, Equatable {
        /// `proxy-jump` (a bastion `ssh` logs in to) or `proxy-command`.
        public var kind: String
        /// `[user@]host[:port]` for a jump, the command (before `%` expansion) for a ProxyCommand.
        public var hop: String

        enum CodingKeys: String, CodingKey, CaseIterable { case kind, hop }

        public init(kind: String, hop: String) {
            self.kind = kind
            self.hop = hop
        }

        init(_ hop: HostRoute.Hop) {
            switch hop {
            case .jump(let jump): self.init(kind: "proxy-jump", hop: CleanText(jump.description, limit: 300).value)
            case .command(let command): self.init(kind: "proxy-command", hop: CleanText(command, limit: 1024).value)
            }
        }

        /// The route these recorded hops describe (what replay restores), each hop read as the
        /// inventory's was: a hop that does not parse refuses the host, it is never dropped from
        /// the route.
        public static func routing(_ hops: [Hop]) -> Result<HostRoute, RouteError> {
            guard let first = hops.first else { return .success(.direct) }
            if first.kind == "proxy-command" {
                return first.hop.isEmpty ? .failure(.missingArgument("ProxyCommand")) : .success(HostRoute(hops: [.command(first.hop)]))
            }
            var route = HostRoute()
            for hop in hops {
                do {
                    route.hops.append(.jump(try JumpHost(hop.hop)))
                } catch {
                    return .failure(RouteError(setting: "ProxyJump", value: hops.map(\.hop).joined(separator: ","), problem: error))
                }
            }
            return .success(route)
        }
    }

    public struct Pin: Codable, Sendable, Equatable {
        public var verdict: PinVerdict
        public var evidence: [String]

        enum CodingKeys: String, CodingKey, CaseIterable { case verdict, evidence }
    }

    public struct Host: Encodable, Sendable, Equatable {
        /// The inventory name.
        public var name: String
        /// Where fleettrust connected (the `HostName` / `ansible_host`).
        public var host: String
        public var port: Int
        /// The numeric peer address, when the connection got that far.
        public var address: String?
        public var user: String?
        public var groups: [String]
        /// The name `ssh` looks the host up under in known_hosts.
        public var knownHostsName: String
        public var ssh: SSHSettings?
        public var status: HostStatus
        /// One sentence: why the status.
        public var reason: String
        /// How trust was established (`known-hosts`, `cert-authority`, `+bare-name`, `+pin`), or null.
        public var method: String?
        public var keys: [Key]
        public var pin: Pin?
        public var error: Failure?
        public var serverVersion: String?
        public var serverHostKeyAlgorithms: [String]?
        public var negotiatedAlgorithm: String?
        /// The scanner that proved the keys (`--scanner-name`) and when its probe finished.
        public var scannedFrom: String
        public var scannedAt: String
        public var stricterThanSSH: [StricterChoice]
        /// The trust policy applied, where it was set (`default`, `inventory`, `FILE:LINE`), and
        /// what the standard policy (what `ssh` would decide) says when another policy decided.
        public var policy: String
        public var policySource: String
        public var standardStatus: HostStatus?
        /// How the keys moved since the last recorded probe (`none`, `first-scan`, `added`,
        /// `removed`, `changed`, `reverted`); null without a history or without keys.
        public var drift: DriftKind?
        public var driftMoves: [DriftMove]
        /// How the host was reached: its hops in order; empty for a direct probe.
        public var route: [Hop]
        /// What the host name's SSHFP records say, when `VerifyHostKeyDNS` has them read; null otherwise.
        public var sshfp: SSHFPEntry?
        /// What the probe's connection shaped like `ssh`'s came to (the key `ssh` meets, or its
        /// failure), so that replay judges it as the live scan did; null when none was made.
        public var sshConnection: SSHConnection?
        /// The key types the server offers that the probe could not fetch, with why; empty when
        /// it fetched them all or proved no key (`error` then says why); null on a TLS entry.
        public var unfetchedKeys: [UnfetchedKey]?

        /// `ssh` or `tls` (documents before TLS endpoints: `ssh`).
        public var endpointProtocol: EndpointProtocol = .ssh
        /// TLS entries only (see `ScanReport+TLS`): the handshake, the chain leaf first, days
        /// left, certificate warnings and evidence sentences.
        public var tlsSession: ScanReport.TLSSession?
        /// The STARTTLS protocol that upgraded the connection (`smtp`, `postgres`…); null on a
        /// TLS entry that speaks TLS from the first byte.
        public var startTLS: StartTLSProtocol?
        public var certificates: [ScanReport.TLSCertificateEntry]?
        public var expiresInDays: ScanReport.TLSExpiry?
        public var warnings: [CertificateWarning]?
        public var evidence: [String]?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case endpointProtocol = "protocol", tlsSession = "tls", startTLS = "starttls", certificates, expiresInDays = "expires_in_days", warnings, evidence
            case name, host, port, address, user, groups, ssh, status, reason, method, keys, pin, error, policy, drift, route, sshfp
            case sshConnection = "ssh_connection", unfetchedKeys = "unfetched_keys"
            case driftMoves = "drift_moves"
            case policySource = "policy_source", standardStatus = "standard_status"
            case knownHostsName = "known_hosts_name", serverVersion = "server_version"
            case serverHostKeyAlgorithms = "server_host_key_algorithms", negotiatedAlgorithm = "negotiated_algorithm"
            case scannedFrom = "scanned_from", scannedAt = "scanned_at", stricterThanSSH = "stricter_than_ssh"
            /// Read from version 2 documents only (`RecordedScan.Host`); never written.
            case sharesKeysWith = "shares_keys_with"
        }

        /// Absent values are written as `null`, so every documented field is always present.
        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(name, forKey: .name); try c.encode(host, forKey: .host); try c.encode(port, forKey: .port)
            try c.encode(address, forKey: .address); try c.encode(user, forKey: .user); try c.encode(groups, forKey: .groups)
            try c.encode(knownHostsName, forKey: .knownHostsName); try c.encode(ssh, forKey: .ssh)
            try c.encode(status, forKey: .status); try c.encode(reason, forKey: .reason); try c.encode(method, forKey: .method)
            try c.encode(keys, forKey: .keys); try c.encode(pin, forKey: .pin); try c.encode(error, forKey: .error)
            try c.encode(serverVersion, forKey: .serverVersion)
            try c.encode(serverHostKeyAlgorithms, forKey: .serverHostKeyAlgorithms)
            try c.encode(negotiatedAlgorithm, forKey: .negotiatedAlgorithm)
            try c.encode(scannedFrom, forKey: .scannedFrom); try c.encode(scannedAt, forKey: .scannedAt)
            try c.encode(stricterThanSSH, forKey: .stricterThanSSH)
            try c.encode(policy, forKey: .policy); try c.encode(policySource, forKey: .policySource)
            try c.encode(standardStatus, forKey: .standardStatus)
            try c.encode(drift, forKey: .drift); try c.encode(driftMoves, forKey: .driftMoves)
            try c.encode(route, forKey: .route)
            if endpointProtocol == .ssh {
                try c.encode(sshfp, forKey: .sshfp)
                try c.encode(sshConnection, forKey: .sshConnection)
                try c.encode(unfetchedKeys ?? [], forKey: .unfetchedKeys)
            }
            try c.encode(endpointProtocol, forKey: .endpointProtocol)
            if endpointProtocol == .tls {
                try c.encode(tlsSession, forKey: .tlsSession); try c.encode(startTLS, forKey: .startTLS)
                try c.encode(certificates, forKey: .certificates)
                try c.encode(expiresInDays, forKey: .expiresInDays); try c.encode(warnings, forKey: .warnings)
                try c.encode(evidence, forKey: .evidence)
            }
        }
    }

    public struct Summary: Codable, Sendable, Equatable {
        public var total: Int
        public var byStatus: [String: Int]
        public var exitStatus: Int32
        /// Hosts per drift kind (hosts without drift are not counted).
        public var byDrift: [String: Int]

        enum CodingKeys: String, CodingKey {
            case total, byStatus = "by_status", exitStatus = "exit_status", byDrift = "by_drift"
        }

        public init(total: Int, byStatus: [String: Int], exitStatus: Int32, byDrift: [String: Int] = [:]) {
            self.total = total
            self.byStatus = byStatus
            self.exitStatus = exitStatus
            self.byDrift = byDrift
        }

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            total = try c.decode(Int.self, forKey: .total)
            byStatus = try c.decode([String: Int].self, forKey: .byStatus)
            exitStatus = try c.decode(Int32.self, forKey: .exitStatus)
            byDrift = try c.decodeIfPresent([String: Int].self, forKey: .byDrift) ?? [:]
        }

        /// Counts one more host (the whole report and the streamed one count the same way).
        mutating func count(_ host: JudgedHost) {
            total += 1
            byStatus[host.status.rawValue, default: 0] += 1
            if let drift = host.drift { byDrift[drift.kind.rawValue, default: 0] += 1 }
            exitStatus = max(exitStatus, ExitStatusRule.host(host))
        }
    }

    public var generatedAt: Date
    public var knownHostsFiles: [String]
    public var pinFiles: [String]
    public var judged: [JudgedHost]

    /// A whole document at once (tests, the fuzzers): the same writer `scan` streams through,
    /// with the shared-keys table of these hosts.
    public init(generatedAt: Date = Date(), knownHostsFiles: [String], pinFiles: [String], judged: [JudgedHost]) {
        self.generatedAt = generatedAt
        self.knownHostsFiles = knownHostsFiles
        self.pinFiles = pinFiles
        self.judged = judged
    }

    public func encoded(skipped: [SkippedInventoryEntry] = []) throws -> Data {
        var out = Data()
        let shared = SharedKeyTable(names: judged.map(\.labels.name.value), results: judged.map(\.probe))
        var writer = ScanDocumentWriter(generatedAt: generatedAt, knownHostsFiles: knownHostsFiles, pinFiles: pinFiles,
                                        sharedKeys: shared) { out.append($0) }
        for host in judged { try writer.append(host) }
        try writer.finish(skipped: skipped, exitStatus: ExitStatusRule.run(hosts: ExitStatusRule.hosts(judged), skipped: !skipped.isEmpty))
        return out
    }
}
