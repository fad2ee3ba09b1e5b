/// The key types `discover -t` prints, named as `ssh-keyscan -t` names them: `ed25519`, `ecdsa`,
/// `rsa` (and `dsa`, `ecdsa-sk`, `ed25519-sk`), or any key-type name OpenSSH maps to one of those
/// (`ssh-ed25519`, `ecdsa-sha2-nistp384`, `rsa-sha2-512`, ...). As in `ssh-keyscan`, any ECDSA
/// name selects every curve. A certificate counts as the type of the key it certifies.
public struct KeyTypeSelection: Equatable, Sendable {
    /// Plain key-type names (`ssh-ed25519`, `ecdsa-sha2-nistp256`, ...) to print.
    public var types: Set<String>
    /// Requested types the probe cannot verify here (DSA): never printed.
    public var unverifiable: [String]

    public struct UnknownType: Error, CustomStringConvertible {
        public var name: String
        public var description: String {
            "unknown key type \"\(Sanitizer.clean(name, limit: 64))\" (ssh-keyscan names: ed25519, ecdsa, rsa, dsa, ecdsa-sk, ed25519-sk)"
        }
    }

    /// `ssh-keyscan`'s default: every type but DSA.
    public static let all = KeyTypeSelection(types: Set([KeyType.ed25519, .ecdsaP256, .ecdsaP384, .ecdsaP521, .rsa,
                                                          .skEd25519, .skEcdsaP256].map(\.name)), unverifiable: [])

    private static let ecdsa: [KeyType] = [.ecdsaP256, .ecdsaP384, .ecdsaP521]
    private static let names: [String: [KeyType]] = [
        "ed25519": [.ed25519], "ssh-ed25519": [.ed25519],
        "ecdsa": ecdsa, "ecdsa-sha2-nistp256": ecdsa, "ecdsa-sha2-nistp384": ecdsa, "ecdsa-sha2-nistp521": ecdsa,
        "rsa": [.rsa], "ssh-rsa": [.rsa], "rsa-sha2-256": [.rsa], "rsa-sha2-512": [.rsa],
        "ecdsa-sk": [.skEcdsaP256], "sk-ecdsa-sha2-nistp256@openssh.com": [.skEcdsaP256],
        "ed25519-sk": [.skEd25519], "sk-ssh-ed25519@openssh.com": [.skEd25519],
    ]
    private static let unverifiableNames: [String: String] = ["dsa": "dsa", "ssh-dss": "dsa"]

    public init(types: Set<String>, unverifiable: [String]) {
        self.types = types
        self.unverifiable = unverifiable
    }

    /// Parses `-t`'s comma-separated list.
    public init(parsing list: String) throws(UnknownType) {
        var types = Set<String>()
        var unverifiable: [String] = []
        for name in list.split(separator: ",").map(String.init) {
            if let kinds = Self.names[name] {
                types.formUnion(kinds.map(\.name))
            } else if let kind = Self.unverifiableNames[name] {
                if !unverifiable.contains(kind) { unverifiable.append(kind) }
            } else {
                throw UnknownType(name: name)
            }
        }
        if types.isEmpty && unverifiable.isEmpty { throw UnknownType(name: list) }
        self.init(types: types, unverifiable: unverifiable)
    }

    public func includes(_ key: HostKey) -> Bool { types.contains(key.kind.plain.name) }
}
