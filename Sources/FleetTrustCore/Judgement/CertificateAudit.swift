/// What a host certificate's owner needs to know before it bites: days left and what is odd about
/// it. Fleets on SSH CAs live and die by certificate expiry.
public struct CertificateAudit: Hashable, Sendable {
    /// Whole days until it expires (negative once expired); nil when it never expires.
    public var expiresInDays: Int?
    public var warnings: [CertificateWarning]

    /// - Parameters:
    ///   - name: the name `ssh` checks principals against (host without port, or the alias).
    ///   - vouched: whether a `@cert-authority` line or a CA pin vouches for its CA.
    public init(_ certificate: HostCertificate, name: String, vouched: Bool, warnDays: Int, now: UInt64) {
        var warnings: [CertificateWarning] = []
        if certificate.validBefore == UInt64.max {
            expiresInDays = nil
            warnings.append(.noExpiry)
        } else {
            let seconds = Int64(clamping: certificate.validBefore) - Int64(clamping: now)
            expiresInDays = Int(seconds >= 0 ? seconds / 86_400 : -((-seconds + 86_399) / 86_400))
            if now >= certificate.validBefore {
                warnings.append(.expired)
            } else if seconds < Int64(warnDays) * 86_400 {
                warnings.append(.expiresSoon)
            }
        }
        if now < certificate.validAfter { warnings.append(.notYetValid) }
        if !certificate.principals.isEmpty, !certificate.principals.contains(name) { warnings.append(.principalMismatch) }
        if certificate.signatureAlgorithm == "ssh-rsa" { warnings.append(.sha1Signature) }
        if !vouched { warnings.append(.unknownCA) }
        self.warnings = warnings
    }
}

public enum CertificateWarning: String, Hashable, Sendable, Codable, CaseIterable {
    case expiresSoon = "expires-soon"
    case expired
    case notYetValid = "not-yet-valid"
    case noExpiry = "no-expiry"
    case principalMismatch = "principal-mismatch"
    case sha1Signature = "sha1-signature"
    case unknownCA = "unknown-ca"
    /// TLS: RSA or DSA under 2048 bits, EC under 256.
    case weakKey = "weak-key"
}
