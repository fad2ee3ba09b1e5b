/// The host-key algorithms fleettrust understands, with what OpenSSH calls them.
///
/// The security-key types (`sk-*`, FIDO) are host keys too: a server can hold one (a token, or
/// a fake), and `ssh` 9.2 offers them by default, so a host showing one must be judged like any other.
public enum KeyType: Hashable, Sendable, CaseIterable {
    case ed25519, ecdsaP256, ecdsaP384, ecdsaP521, rsa, dsa, skEd25519, skEcdsaP256
    case ed25519Cert, ecdsaP256Cert, ecdsaP384Cert, ecdsaP521Cert, rsaCert, dsaCert, skEd25519Cert, skEcdsaP256Cert

    public init?(name: String) {
        guard let match = KeyType.allCases.first(where: { $0.name == name }) else { return nil }
        self = match
    }

    /// `rsa-sha2-*` are signature algorithms that OpenSSH also accepts as RSA key names.
    public static func canonicalName(_ name: String) -> String {
        rsaSignatureNames[name] ?? name
    }

    /// Each `rsa-sha2-*` signature algorithm, with the RSA key name it stands for.
    static let rsaSignatureNames = [
        "rsa-sha2-256": "ssh-rsa", "rsa-sha2-512": "ssh-rsa",
        "rsa-sha2-256-cert-v01@openssh.com": "ssh-rsa-cert-v01@openssh.com",
        "rsa-sha2-512-cert-v01@openssh.com": "ssh-rsa-cert-v01@openssh.com",
    ]

    public var name: String {
        switch self {
        case .ed25519: return "ssh-ed25519"
        case .ecdsaP256: return "ecdsa-sha2-nistp256"
        case .ecdsaP384: return "ecdsa-sha2-nistp384"
        case .ecdsaP521: return "ecdsa-sha2-nistp521"
        case .rsa: return "ssh-rsa"
        case .dsa: return "ssh-dss"
        case .skEd25519: return "sk-ssh-ed25519@openssh.com"
        case .skEcdsaP256: return "sk-ecdsa-sha2-nistp256@openssh.com"
        case .ed25519Cert: return "ssh-ed25519-cert-v01@openssh.com"
        case .ecdsaP256Cert: return "ecdsa-sha2-nistp256-cert-v01@openssh.com"
        case .ecdsaP384Cert: return "ecdsa-sha2-nistp384-cert-v01@openssh.com"
        case .ecdsaP521Cert: return "ecdsa-sha2-nistp521-cert-v01@openssh.com"
        case .rsaCert: return "ssh-rsa-cert-v01@openssh.com"
        case .dsaCert: return "ssh-dss-cert-v01@openssh.com"
        case .skEd25519Cert: return "sk-ssh-ed25519-cert-v01@openssh.com"
        case .skEcdsaP256Cert: return "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com"
        }
    }

    /// The short label `ssh-keygen -l` prints in parentheses.
    public var label: String {
        switch plain {
        case .ed25519: return isCertificate ? "ED25519-CERT" : "ED25519"
        case .ecdsaP256, .ecdsaP384, .ecdsaP521: return isCertificate ? "ECDSA-CERT" : "ECDSA"
        case .rsa: return isCertificate ? "RSA-CERT" : "RSA"
        case .skEd25519: return isCertificate ? "ED25519-SK-CERT" : "ED25519-SK"
        case .skEcdsaP256: return isCertificate ? "ECDSA-SK-CERT" : "ECDSA-SK"
        default: return isCertificate ? "DSA-CERT" : "DSA"
        }
    }

    public var isCertificate: Bool {
        switch self {
        case .ed25519Cert, .ecdsaP256Cert, .ecdsaP384Cert, .ecdsaP521Cert, .rsaCert, .dsaCert,
             .skEd25519Cert, .skEcdsaP256Cert: return true
        default: return false
        }
    }

    /// For a certificate type, the type of the key it certifies; otherwise itself.
    public var plain: KeyType {
        switch self {
        case .ed25519Cert: return .ed25519
        case .ecdsaP256Cert: return .ecdsaP256
        case .ecdsaP384Cert: return .ecdsaP384
        case .ecdsaP521Cert: return .ecdsaP521
        case .rsaCert: return .rsa
        case .dsaCert: return .dsa
        case .skEd25519Cert: return .skEd25519
        case .skEcdsaP256Cert: return .skEcdsaP256
        default: return self
        }
    }

    var curveName: String? {
        switch plain {
        case .ecdsaP256, .skEcdsaP256: return "nistp256"
        case .ecdsaP384: return "nistp384"
        case .ecdsaP521: return "nistp521"
        default: return nil
        }
    }

    func bits(blob: [UInt8]) -> Int {
        switch plain {
        case .ed25519, .skEd25519: return 256
        case .ecdsaP256, .skEcdsaP256: return 256
        case .ecdsaP384: return 384
        case .ecdsaP521: return 521
        case .rsa, .dsa:
            var reader = SSHWireReader(blob)
            _ = try? reader.readString()
            if isCertificate { _ = try? reader.readString() }
            if plain == .rsa { _ = try? reader.readString() }
            guard let n = try? reader.readString() else { return 0 }
            let trimmed = n.drop { $0 == 0 }
            guard let top = trimmed.first else { return 0 }
            return (trimmed.count - 1) * 8 + (8 - top.leadingZeroBitCount)
        default: return 0
        }
    }
}
