import Foundation

extension RecordedScan {
    /// One recorded host entry, every field of the contract typed.
    public struct Host: Decodable, Sendable, Equatable {
        public var name: String
        public var host: String
        public var port: Int
        public var address: String?
        public var user: String?
        public var groups: [String]
        public var knownHostsName: String
        public var ssh: ScanReport.SSHSettings?
        public var status: HostStatus
        public var reason: String
        public var method: String?
        public var keys: [Key]
        public var pin: ScanReport.Pin?
        public var error: ScanReport.Failure?
        public var serverVersion: String?
        public var serverHostKeyAlgorithms: [String]?
        public var negotiatedAlgorithm: String?
        /// Version 2 only: the other hosts presenting one of its keys (version 3: `shared_keys`).
        public var sharesKeysWith: [String]
        public var stricterThanSSH: [StricterChoice]
        public var policy: String
        public var policySource: String
        public var standardStatus: HostStatus?
        public var drift: DriftKind?
        public var driftMoves: [ScanReport.DriftMove]
        public var route: [ScanReport.Hop]
        /// What the host name's SSHFP records said (read back for reports, not judged again).
        public var sshfp: ScanReport.SSHFPEntry?
        /// What the connection shaped like `ssh`'s came to; nil in documents before it was recorded.
        public var sshConnection: ScanReport.SSHConnection?
        /// The key types the scan could not fetch, with why; empty in documents before it was recorded.
        public var unfetchedKeys: [ScanReport.UnfetchedKey]
        /// Version 3: the scanner that proved the keys and when (RFC 3339); nil in older documents.
        public var scannedFrom: String?
        public var scannedAt: String?
        public var endpointProtocol: EndpointProtocol
        public var tlsSession: ScanReport.TLSSession?
        public var startTLS: StartTLSProtocol?
        public var certificates: [ScanReport.TLSCertificateEntry]?
        public var expiresInDays: ScanReport.TLSExpiry?
        public var warnings: [CertificateWarning]?
        public var evidence: [String]?

        /// The one list of a host's field names, the writer's.
        typealias CodingKeys = ScanReport.Host.CodingKeys

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            name = try c.decode(String.self, forKey: .name)
            host = try c.decode(String.self, forKey: .host)
            port = try c.decode(Int.self, forKey: .port)
            address = try c.decodeIfPresent(String.self, forKey: .address)
            user = try c.decodeIfPresent(String.self, forKey: .user)
            groups = try c.decodeIfPresent([String].self, forKey: .groups) ?? []
            knownHostsName = try c.decodeIfPresent(String.self, forKey: .knownHostsName) ?? ""
            ssh = try c.decodeIfPresent(ScanReport.SSHSettings.self, forKey: .ssh)
            status = try c.decode(HostStatus.self, forKey: .status)
            reason = try c.decodeIfPresent(String.self, forKey: .reason) ?? ""
            method = try c.decodeIfPresent(String.self, forKey: .method)
            keys = try c.decode([Key].self, forKey: .keys)
            pin = try c.decodeIfPresent(ScanReport.Pin.self, forKey: .pin)
            error = try c.decodeIfPresent(ScanReport.Failure.self, forKey: .error)
            try Self.checkStages(error.map { [$0] } ?? [], at: .error, in: c)
            serverVersion = try c.decodeIfPresent(String.self, forKey: .serverVersion)
            serverHostKeyAlgorithms = try c.decodeIfPresent([String].self, forKey: .serverHostKeyAlgorithms)
            negotiatedAlgorithm = try c.decodeIfPresent(String.self, forKey: .negotiatedAlgorithm)
            sharesKeysWith = try c.decodeIfPresent([String].self, forKey: .sharesKeysWith) ?? []
            stricterThanSSH = try c.decodeIfPresent([StricterChoice].self, forKey: .stricterThanSSH) ?? []
            policy = try c.decodeIfPresent(String.self, forKey: .policy) ?? PolicyName.standard.rawValue
            policySource = try c.decodeIfPresent(String.self, forKey: .policySource) ?? "default"
            standardStatus = try c.decodeIfPresent(HostStatus.self, forKey: .standardStatus)
            drift = try c.decodeIfPresent(DriftKind.self, forKey: .drift)
            driftMoves = try c.decodeIfPresent([ScanReport.DriftMove].self, forKey: .driftMoves) ?? []
            route = try c.decodeIfPresent([ScanReport.Hop].self, forKey: .route) ?? []
            sshfp = try c.decodeIfPresent(ScanReport.SSHFPEntry.self, forKey: .sshfp)
            sshConnection = try c.decodeIfPresent(ScanReport.SSHConnection.self, forKey: .sshConnection)
            try Self.checkStages(sshConnection?.error.map { [$0] } ?? [], at: .sshConnection, in: c)
            unfetchedKeys = try c.decodeIfPresent([ScanReport.UnfetchedKey].self, forKey: .unfetchedKeys) ?? []
            try Self.checkStages(unfetchedKeys.map(\.error), at: .unfetchedKeys, in: c)
            scannedFrom = try c.decodeIfPresent(String.self, forKey: .scannedFrom)
            scannedAt = try c.decodeIfPresent(String.self, forKey: .scannedAt)
            endpointProtocol = try c.decodeIfPresent(EndpointProtocol.self, forKey: .endpointProtocol) ?? .ssh
            tlsSession = try c.decodeIfPresent(ScanReport.TLSSession.self, forKey: .tlsSession)
            startTLS = try c.decodeIfPresent(StartTLSProtocol.self, forKey: .startTLS)
            certificates = try c.decodeIfPresent([ScanReport.TLSCertificateEntry].self, forKey: .certificates)
            expiresInDays = try c.decodeIfPresent(ScanReport.TLSExpiry.self, forKey: .expiresInDays)
            warnings = try c.decodeIfPresent([CertificateWarning].self, forKey: .warnings)
            evidence = try c.decodeIfPresent([String].self, forKey: .evidence)
        }

        /// Refuses a recorded failure whose stage this version does not know (replay types it).
        private static func checkStages(_ failures: [ScanReport.Failure], at key: CodingKeys,
                                        in container: KeyedDecodingContainer<CodingKeys>) throws {
            guard let unknown = failures.first(where: { $0.probeFailure == nil }) else { return }
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "unknown stage \(unknown.stage)")
        }

        /// The recorded handshake of a TLS entry, for replay; nil when the handshake failed.
        func recordedHandshake() throws -> TLSHandshake? {
            guard let session = tlsSession, let certificates, !certificates.isEmpty else { return nil }
            let chain = try certificates.enumerated().map { index, entry -> [UInt8] in
                guard let der = Base64.decode(entry.der) else {
                    throw ScanReplay.Problem(source: name, message: "certificates[\(index)].der is not base64")
                }
                return der
            }
            return TLSHandshake(version: session.version, cipher: session.cipher, serverName: session.sni, chain: chain,
                                ocspStapled: session.ocspStapled, handshakeMilliseconds: session.handshakeMilliseconds)
        }

        /// The probe's failure, its stage typed (checked when decoded).
        var failure: ProbeFailure? { error?.probeFailure }
    }
}

extension ScanReport.Failure {
    /// The recorded failure as the probe's, its stage typed; nil for a stage this version does
    /// not know (which decoding a recorded host refuses).
    var probeFailure: ProbeFailure? {
        ProbeStage(rawValue: stage).map { ProbeFailure(stage: $0, code: code, message: message) }
    }
}
