/// Why a presented host certificate was not accepted through a CA, as OpenSSH 9.2 would refuse
/// it (`sshkey.c:cert_parse`, `sshkey_cert_check_host`), plus the CA being unknown.
public enum CertificateProblem: String, Sendable, Codable, CaseIterable {
    // OpenSSH does not read these as keys at all: the certificate is invalid.
    /// The certificate's body cannot be decoded.
    case undecodable
    /// The CA's signature over the certificate does not verify (forged or altered).
    case badSignature = "bad-signature"
    /// A user certificate (or an unknown role) presented as a host key.
    case notHostCertificate = "not-host-certificate"
    // Readable certificates that a CA line cannot vouch for: `ssh` falls back to the plain key.
    case expired
    case notYetValid = "not-yet-valid"
    case principalMismatch = "principal-mismatch"
    case criticalOptions = "critical-options"
    /// Signed with an algorithm outside `CASignatureAlgorithms` (by default: `ssh-rsa`, SHA-1;
    /// `ssh` checks this in `sshkey_check_cert_sigtype` before the CA lookup).
    case disallowedSignatureAlgorithm = "disallowed-signature-algorithm"
    /// No `@cert-authority` line for this host names the certificate's CA.
    case unknownCA = "unknown-ca"
}

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

    /// OpenSSH's default `CASignatureAlgorithms` in its order (`SSH_ALLOWED_CA_SIGALGS`).
    public static let defaultCASignatureOrder = [
        "ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
        "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com", "rsa-sha2-512", "rsa-sha2-256",
    ]

    /// Every signature algorithm OpenSSH 9.2 knows (`sshkey_alg_list(0, 1, 1)`): what a
    /// `CASignatureAlgorithms` pattern can select.
    public static let knownSignatureAlgorithms = HostKeyAlgorithms.openSSHKnown.filter { !$0.contains("-cert-") }

    /// `CASignatureAlgorithms` assembled as `ssh` assembles it (`kex_assemble_names` over the default).
    public static func allowedSignatures(_ setting: SSHAlgorithmList?) -> Set<String> {
        guard let setting else { return defaultCASignatureAlgorithms }
        return Set(setting.assemble(defaults: defaultCASignatureOrder, known: knownSignatureAlgorithms))
    }

    /// What `cert_parse` demands before OpenSSH accepts a certificate as a key at all: a valid
    /// CA signature and sane fields; plus (stricter than `ssh`, which falls back to the plain
    /// key) the host role. Nil when the certificate is a well-formed host certificate.
    public static func invalidity(of certificate: HostCertificate) -> CertificateProblem? {
        guard certificate.roleValue == 1 || certificate.roleValue == 2,
              certificate.principals.count <= 256,
              !certificate.principals.contains(where: { $0.utf8.contains(0) }) else { return .undecodable }
        guard certificate.isSignatureValid else { return .badSignature }
        guard certificate.role == .host else { return .notHostCertificate }
        return nil
    }

    /// `sshkey_cert_check_host` for `name` (the host name without port, or the alias) at
    /// `now` (seconds since the epoch). Returns nil when accepted, else OpenSSH's reason.
    public static func problem(with certificate: HostCertificate, name: String, now: UInt64,
                               allowedSignatures: Set<String> = defaultCASignatureAlgorithms) -> CertificateProblem? {
        if certificate.role != .host { return .notHostCertificate }
        if now < certificate.validAfter { return .notYetValid }
        if now >= certificate.validBefore { return .expired }
        if !certificate.principals.isEmpty, !certificate.principals.contains(name) { return .principalMismatch }
        if !certificate.criticalOptions.isEmpty { return .criticalOptions }
        guard let algorithm = certificate.signatureAlgorithm,
              allowedSignatures.contains(algorithm) else { return .disallowedSignatureAlgorithm }
        return nil
    }
}
