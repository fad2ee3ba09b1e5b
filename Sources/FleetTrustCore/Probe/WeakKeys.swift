/// Why a host key is weak today, in the terms an operator acts on.
///
/// DSA is disabled in OpenSSH since 7.0; RSA moduli under 2048 bits are factorable by a
/// determined attacker; a server that can sign only with `ssh-rsa` uses SHA-1, which OpenSSH
/// clients refuse by default since 8.8.
public enum KeyWeakness: String, Hashable, Sendable, Codable, CaseIterable {
    case dsa
    case shortRSA = "short-rsa"
    case sha1Only = "sha1-only"

    public var sentence: String {
        switch self {
        case .dsa: return "DSA host keys are obsolete and disabled by OpenSSH"
        case .shortRSA: return "RSA host key shorter than 2048 bits"
        case .sha1Only: return "the server signs with ssh-rsa (SHA-1) only"
        }
    }
}

public enum WeakKeys {
    public static let minimumRSABits = 2048

    /// The weaknesses of one discovered key (empty when it is fine).
    public static func weaknesses(of discovered: DiscoveredKey) -> [KeyWeakness] {
        let plain = discovered.key.kind.plain
        var found: [KeyWeakness] = []
        if plain == .dsa { found.append(.dsa) }
        if plain == .rsa && discovered.key.bits < minimumRSABits { found.append(.shortRSA) }
        if plain == .rsa && discovered.algorithms?.hostKey == "ssh-rsa" { found.append(.sha1Only) }
        return found
    }
}
