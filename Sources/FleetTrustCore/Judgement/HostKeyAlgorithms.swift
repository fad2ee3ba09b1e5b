/// Which host key `ssh` meets: OpenSSH 9.2's client host-key algorithm list, as a per-host
/// `HostKeyAlgorithms` setting shapes it (`kex.c:kex_assemble_names`), reordered by what
/// known_hosts records for the host (`sshconnect2.c:order_hostkeyalgs`), then negotiated against
/// the server's list the RFC 4253 way (the first client algorithm the server also offers).
///
/// A probe sees every key a server holds; `ssh` sees one. Getting this one right is what makes a
/// host's status equal what `ssh` does when it connects.
public enum HostKeyAlgorithms {
    /// OpenSSH 9.2's default `HostKeyAlgorithms` (`KEX_DEFAULT_PK_ALG`): certificates first, no
    /// `ssh-rsa` (SHA-1) and no DSA.
    public static let openSSHDefault = [
        "ssh-ed25519-cert-v01@openssh.com", "ecdsa-sha2-nistp256-cert-v01@openssh.com",
        "ecdsa-sha2-nistp384-cert-v01@openssh.com", "ecdsa-sha2-nistp521-cert-v01@openssh.com",
        "sk-ssh-ed25519-cert-v01@openssh.com", "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com",
        "rsa-sha2-512-cert-v01@openssh.com", "rsa-sha2-256-cert-v01@openssh.com",
        "ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
        "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com",
        "rsa-sha2-512", "rsa-sha2-256",
    ]

    /// Every algorithm name OpenSSH 9.2 knows (`sshkey_alg_list(0, 0, 1, ',')`), in its order (as
    /// `ssh -G -o HostKeyAlgorithms='*'` prints it): the names a configured pattern can select.
    public static let openSSHKnown = [
        "ssh-ed25519", "ssh-ed25519-cert-v01@openssh.com", "sk-ssh-ed25519@openssh.com", "sk-ssh-ed25519-cert-v01@openssh.com",
        "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp256-cert-v01@openssh.com", "ecdsa-sha2-nistp384",
        "ecdsa-sha2-nistp384-cert-v01@openssh.com", "ecdsa-sha2-nistp521", "ecdsa-sha2-nistp521-cert-v01@openssh.com",
        "sk-ecdsa-sha2-nistp256@openssh.com", "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com",
        "webauthn-sk-ecdsa-sha2-nistp256@openssh.com", "ssh-dss", "ssh-dss-cert-v01@openssh.com",
        "ssh-rsa", "ssh-rsa-cert-v01@openssh.com", "rsa-sha2-256", "rsa-sha2-256-cert-v01@openssh.com",
        "rsa-sha2-512", "rsa-sha2-512-cert-v01@openssh.com",
    ]

    /// A `HostKeyAlgorithms` value `ssh` would refuse to start with.
    public struct InvalidSetting: Error, Hashable, Sendable, CustomStringConvertible {
        public var setting: CleanText
        public var description: String { "HostKeyAlgorithms \(setting) selects no algorithm ssh knows" }
    }

    /// `kex_assemble_names` over the default: nil gives the default; `+list` appends to it,
    /// `-list` removes from it, `^list` puts the list first; anything else replaces it. Elements
    /// are patterns (`*`, `?`) matched against every known name; unknown names are dropped.
    public static func assemble(_ setting: SSHAlgorithmList?) throws(InvalidSetting) -> [String] {
        guard let setting else { return openSSHDefault }
        let assembled = setting.assemble(defaults: openSSHDefault, known: openSSHKnown)
        guard !assembled.isEmpty else { throw InvalidSetting(setting: CleanText(setting.description)) }
        return assembled
    }

    /// The list `ssh` offers in its KEXINIT for this host (`sshconnect2.c:ssh_kex2`): the
    /// assembled setting, reordered by what known_hosts records only when the setting is unset or
    /// starts with `+` or `-`; an explicit or `^` list is offered as written.
    public static func offered(_ setting: SSHAlgorithmList?, recorded: [KnownHosts.Match]) throws(InvalidSetting) -> [String] {
        let assembled = try assemble(setting)
        return setting?.reordersByKnownHosts ?? true ? order(assembled, recorded: recorded) : assembled
    }

    /// `order_hostkeyalgs`: `recorded` are the known_hosts entries matching the host string (no
    /// bare-name retry, as in `ssh`). When an unmarked line records the plain type of the list's
    /// first algorithm the list is used verbatim (certificates first); otherwise algorithms whose
    /// plain type is recorded (and every certificate algorithm when a `@cert-authority` line
    /// matches) move to the front, each group keeping its order.
    public static func order(_ algorithms: [String], recorded: [KnownHosts.Match]) -> [String] {
        let plainRecorded = Set(recorded.compactMap { match -> KeyType? in
            guard match.entry.marker == nil, let key = match.entry.key.hostKey, !key.isCertificate else { return nil }
            return key.kind
        })
        let hasAuthority = recorded.contains { $0.entry.marker == .certAuthority }
        if let best = algorithms.first, let kind = keyType(ofAlgorithm: best), plainRecorded.contains(kind.plain) {
            return algorithms
        }
        var first: [String] = [], last: [String] = []
        for algorithm in algorithms {
            let kind = keyType(ofAlgorithm: algorithm)
            if kind?.isCertificate == true && hasAuthority {
                first.append(algorithm)
            } else if let kind, plainRecorded.contains(kind.plain) {
                first.append(algorithm)
            } else {
                last.append(algorithm)
            }
        }
        return first + last
    }

    /// The algorithm the key exchange settles on: the first of the client's that the server offers.
    public static func negotiate(client: [String], server: [String]) -> String? {
        let offered = Set(server)
        return client.first { offered.contains($0) }
    }

    /// The key type an algorithm name selects (`rsa-sha2-512` selects an RSA key); nil for a name
    /// that selects none.
    public static func keyType(ofAlgorithm name: String) -> KeyType? {
        keyTypes[name]
    }

    /// Every algorithm name that selects a key type, looked up instead of searched for: the judge
    /// classifies each host's whole offered list, a search compared each name with every type's.
    private static let keyTypes: [String: KeyType] = {
        var table = Dictionary(uniqueKeysWithValues: KeyType.allCases.map { ($0.name, $0) })
        for (signature, keyName) in KeyType.rsaSignatureNames {
            table[signature] = KeyType(name: keyName)
        }
        return table
    }()

    /// What a server offers, inferred from the keys a probe found when its KEXINIT was not seen
    /// (a scan recorded by an older version): each key under the algorithm it was fetched with,
    /// RSA keys under both SHA-2 algorithms unless only `ssh-rsa` was seen.
    public static func inferredServerAlgorithms(_ keys: [DiscoveredKey]) -> [String] {
        var names: [String] = []
        func add(_ name: String) { if !names.contains(name) { names.append(name) } }
        for discovered in keys {
            let kind = discovered.key.kind
            switch kind {
            case .rsa:
                if discovered.algorithms?.hostKey == "ssh-rsa" { add("ssh-rsa") } else { add("rsa-sha2-512"); add("rsa-sha2-256") }
            case .rsaCert:
                add("rsa-sha2-512-cert-v01@openssh.com"); add("rsa-sha2-256-cert-v01@openssh.com")
            default:
                add(kind.name)
            }
        }
        return names
    }
}
