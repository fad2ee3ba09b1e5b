/// The checks OpenSSH 9.2 applies to host certificates (`sshkey.c:cert_parse`,
/// `sshkey_cert_check_host`).
///
/// A certificate vouched for by a CA line is trusted only if it passes all of them;
/// one that fails is judged again as its plain key, as `ssh` does.
public enum CertificateAcceptance {
    /// OpenSSH's default `CASignatureAlgorithms`: no `ssh-rsa` (SHA-1), no DSA.
    public static let defaultCASignatureAlgorithms: Set<String> = [
        "ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
        "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com", "rsa-sha2-512", "rsa-sha2-256",
    ]

    /// What `cert_parse` demands before OpenSSH accepts a certificate as a key at all:
    /// a user or host role, at most 256 principals, and a valid CA signature.
    static func isWellFormed(_ certificate: HostCertificate) -> Bool {
        guard certificate.roleValue == 1 || certificate.roleValue == 2,
              certificate.principals.count <= 256,
              !certificate.principals.contains(where: { $0.utf8.contains(0) }) else { return false }
        return caSignatureIsValid(certificate)
    }

    /// Whether the CA really signed the certificate; a certificate with a bad signature
    /// is no key at all for OpenSSH.
    static func caSignatureIsValid(_ certificate: HostCertificate) -> Bool {
        certificate.isSignatureValid
    }

    /// `sshkey_cert_check_host` for `name` (the host name without port, or the alias) at
    /// `now` (seconds since the epoch). Returns nil when accepted, else OpenSSH's reason.
    public static func problem(with certificate: HostCertificate, name: String, now: UInt64) -> String? {
        if certificate.role != .host { return "not a host certificate" }
        if now < certificate.validAfter { return "certificate is not yet valid" }
        if now >= certificate.validBefore { return "certificate has expired" }
        if !certificate.principals.isEmpty, !certificate.principals.contains(name) {
            return "\(Sanitizer.clean(name, limit: 128)) is not a listed principal"
        }
        if !certificate.criticalOptions.isEmpty { return "certificate has critical options" }
        guard let algorithm = certificate.signatureAlgorithm,
              defaultCASignatureAlgorithms.contains(algorithm) else {
            return "certificate is signed with a disallowed algorithm"
        }
        return nil
    }
}
