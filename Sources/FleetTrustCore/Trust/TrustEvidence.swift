/// Why a verdict was reached: the file line that matched or contradicted, or the CA or pin.
///
/// People act on a "changed" or "revoked" answer by editing a file; they need the exact
/// place. Hashed lines are named by file and line only, never by the name they hide.
public struct TrustEvidence: Sendable, Hashable, Codable {
    public enum Role: String, Sendable, Codable {
        /// A line recording the presented key.
        case matchedKey = "matched-key"
        /// A `@cert-authority` line whose CA signed the presented certificate.
        case certificateAuthority = "certificate-authority"
        /// A line recording another key for this name.
        case differentKey = "different-key"
        /// A `@revoked` line naming the presented key or its CA.
        case revocation
        /// An address line recording another key (CheckHostIP).
        case addressDifferentKey = "address-different-key"
        /// A pin line whose fingerprints decided the pin answer.
        case pin
        /// The `RevokedHostKeys` file revokes the presented key or its CA (`line` is the key
        /// list's line; 0 for a KRL, whose entries have no lines).
        case revokedHostKeys = "revoked-host-keys"
    }

    public var role: Role
    public var path: String
    public var line: Int
    /// The recorded key's type and SHA256 fingerprint (for a CA line: the CA key's).
    public var keyType: String
    public var fingerprint: String
    /// Whether the line's host field is hashed.
    public var hashed: Bool

    public init(role: Role, path: String, line: Int, keyType: String, fingerprint: String, hashed: Bool) {
        self.role = role
        self.path = path
        self.line = line
        self.keyType = keyType
        self.fingerprint = fingerprint
        self.hashed = hashed
    }

    init(_ role: Role, _ match: KnownHosts.Match) {
        let key = match.entry.key
        let fingerprint = key.fingerprint
        var hashed = false
        if case .hashed = match.entry.hosts { hashed = true }
        self.init(role: role, path: match.path, line: match.line, keyType: key.typeName,
                  fingerprint: fingerprint, hashed: hashed)
    }

    /// One sentence for people, e.g. `~/.ssh/known_hosts:12 records another key (ssh-rsa SHA256:…)`.
    public var sentence: String {
        let place = "\(Sanitizer.clean(path)):\(line)"
        let key = "\(Sanitizer.clean(keyType, limit: 64)) \(fingerprint)"
        switch role {
        case .matchedKey: return "\(place) records this key (\(key))"
        case .certificateAuthority: return "\(place) names the certificate's CA (\(key))"
        case .differentKey: return "\(place) records another key (\(key))"
        case .revocation: return "\(place) revokes \(key)"
        case .addressDifferentKey: return "\(place) records another key for the address (\(key))"
        case .pin: return "\(place) pins \(key)"
        case .revokedHostKeys:
            return line > 0 ? "\(place) (RevokedHostKeys) revokes \(key)" : "RevokedHostKeys \(Sanitizer.clean(path)) revokes \(key)"
        }
    }
}
