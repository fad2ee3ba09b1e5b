import Foundation

/// The TLS fields of a scan JSON host entry (present on `"protocol": "tls"` entries only): a
/// rendering of `JudgedHost.tls`, and, through each certificate's `der`, what `--replay` judges
/// again.
extension ScanReport {
    /// The handshake: `tls` on a TLS entry.
    public struct TLSSession: Codable, Sendable, Equatable {
        public var version: String
        public var cipher: String
        /// The SNI sent (null for an endpoint named by an IP address).
        public var sni: String?
        public var ocspStapled: Bool
        public var handshakeMilliseconds: Double?
        /// The name checked against the leaf, whether the leaf names it, and the CAs the chain was validated against.
        public var checkedName: String
        public var nameMatches: Bool
        public var chainValidates: Bool
        public var chainProblem: String?
        public var trustAnchors: String

        enum CodingKeys: String, CodingKey {
            case version, cipher, sni, ocspStapled = "ocsp_stapled", handshakeMilliseconds = "handshake_ms"
            case checkedName = "checked_name", nameMatches = "name_matches", chainValidates = "chain_validates"
            case chainProblem = "chain_problem", trustAnchors = "trust_anchors"
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(version, forKey: .version); try c.encode(cipher, forKey: .cipher); try c.encode(sni, forKey: .sni)
            try c.encode(ocspStapled, forKey: .ocspStapled); try c.encode(handshakeMilliseconds, forKey: .handshakeMilliseconds)
            try c.encode(checkedName, forKey: .checkedName); try c.encode(nameMatches, forKey: .nameMatches)
            try c.encode(chainValidates, forKey: .chainValidates); try c.encode(chainProblem, forKey: .chainProblem)
            try c.encode(trustAnchors, forKey: .trustAnchors)
        }
    }

    /// One certificate of the chain the server sent, leaf first.
    public struct TLSCertificateEntry: Codable, Sendable, Equatable {
        public var subject: String
        public var issuer: String
        public var san: [String]
        public var notBefore: String
        public var notAfter: String
        public var serial: String
        /// SHA-256 of the certificate (hex) and of its SubjectPublicKeyInfo (base64, the `pin-sha256:` value).
        public var sha256: String
        public var spkiSHA256: String
        public var selfSigned: Bool
        public var keyType: String
        public var keyBits: Int
        public var signatureAlgorithm: String
        /// Whether a pin in force matched this certificate's key.
        public var pinned: Bool
        /// The certificate as sent (base64 DER): what `--replay` judges again.
        public var der: String

        enum CodingKeys: String, CodingKey {
            case subject, issuer, san, serial, sha256, der, pinned
            case notBefore = "not_before", notAfter = "not_after", spkiSHA256 = "spki_sha256", selfSigned = "self_signed"
            case keyType = "key_type", keyBits = "key_bits", signatureAlgorithm = "signature_algorithm"
        }

        init(_ certificate: TLSCertificate, pinned: Bool) {
            subject = certificate.subject.value
            issuer = certificate.issuer.value
            san = certificate.subjectAltNames.map(\.text)
            notBefore = JudgementWords.date(certificate.notBefore)
            notAfter = JudgementWords.date(certificate.notAfter)
            serial = certificate.serial
            sha256 = certificate.sha256
            spkiSHA256 = certificate.spkiSHA256
            selfSigned = certificate.selfSigned
            keyType = certificate.keyType
            keyBits = certificate.keyBits
            signatureAlgorithm = certificate.signatureAlgorithm
            self.pinned = pinned
            der = Base64.encode(certificate.der)
        }
    }

    /// Whole days left for the leaf and for the earliest-expiring certificate of the chain.
    public struct TLSExpiry: Codable, Sendable, Equatable {
        public var leaf: Int
        public var chain: Int
    }
}

extension ScanReport.Host {
    /// Fills the TLS fields from a TLS endpoint's judgement.
    mutating func renderTLS(_ judged: JudgedHost) {
        ssh = nil
        knownHostsName = ""
        evidence = JudgementWords.tlsEvidence(judged)
        if case .tls(let endpoint) = judged.host.endpoint { startTLS = endpoint.startTLS }
        guard let tls = judged.tls else { return }
        tlsSession = ScanReport.TLSSession(version: tls.handshake.version, cipher: tls.handshake.cipher,
                                           sni: tls.handshake.serverName.map { CleanText($0, limit: 253).value },
                                           ocspStapled: tls.handshake.ocspStapled,
                                           handshakeMilliseconds: tls.handshake.handshakeMilliseconds.map { ($0 * 10).rounded() / 10 },
                                           checkedName: CleanText(tls.checkedName, limit: 253).value, nameMatches: tls.nameMatches,
                                           chainValidates: tls.chain.validates, chainProblem: tls.chain.problem?.value,
                                           trustAnchors: CleanText(tls.anchorsSource, limit: 1024).value)
        certificates = tls.certificates.map { ScanReport.TLSCertificateEntry($0, pinned: $0.sha256 == tls.pinnedCertificate?.sha256) }
        expiresInDays = ScanReport.TLSExpiry(leaf: tls.leafExpiresInDays, chain: tls.chainExpiresInDays)
        warnings = tls.warnings
    }
}
