import FleetTrustCore

/// Which host-key algorithm lists to offer, one handshake each, to collect every key a server has.
///
/// One handshake yields one key, so (as `ssh-keyscan` does) we ask once per key type. The first
/// exchange (`CertificateFirstProbe`) usually reads the server's KEXINIT, which names every
/// host-key algorithm it offers, and the plan is then exactly those types; without that list (a
/// server that speaks only after the client) we start with the common types and learn the list
/// from the first refusal. RSA is asked for one signature algorithm at a time so the negotiated
/// one is known, and `ssh-rsa` (SHA-1) only when the server offers nothing better. Our own client
/// does every handshake; libssh, the independent fallback, is asked for a type only when ours
/// cannot negotiate it (libssh 0.10 verifies neither certificates nor security keys).
struct HostKeyPlan: Sendable {
    static let ecdsaAlgorithms = ["ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521"]
    /// Security-key types, asked for only when the server lists them (our own client verifies them).
    static let securityKeyAlgorithms = ["sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com"]
    static let rsaAlgorithms = ["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"]

    private(set) var pending: [[String]] = [["ssh-ed25519"], ecdsaAlgorithms, ["rsa-sha2-512"]]
    /// The server's full list, once its KEXINIT (or a refusal) showed it.
    private(set) var serverAlgorithms: [String]?
    private var foundTypes: Set<String> = []

    /// The next list to offer (comma-separated), or nil when done.
    mutating func next() -> String? {
        while let request = pending.first {
            pending.removeFirst()
            let wanted = request.filter { !foundTypes.contains(KeyType.canonicalName($0)) }
            if !wanted.isEmpty { return wanted.joined(separator: ",") }
        }
        return nil
    }

    /// The algorithm a list from `next()` stands for: the first the server offers, when its list
    /// is known, else the list's first.
    func offeredFirst(of list: String) -> String {
        let algorithms = list.split(separator: ",").map(String.init)
        return serverAlgorithms.flatMap { offered in algorithms.first(where: offered.contains) } ?? algorithms.first ?? list
    }

    mutating func found(keyType: String) {
        foundTypes.insert(keyType)
    }

    /// Replans from the server's own list (its KEXINIT, or a "no match" refusal); later lists are ignored.
    mutating func learn(serverAlgorithms offered: [String]) {
        guard serverAlgorithms == nil else { return }
        serverAlgorithms = offered
        var plan: [[String]] = []
        if offered.contains("ssh-ed25519") { plan.append(["ssh-ed25519"]) }
        for curve in Self.ecdsaAlgorithms where offered.contains(curve) { plan.append([curve]) }
        for securityKey in Self.securityKeyAlgorithms where offered.contains(securityKey) { plan.append([securityKey]) }
        if let rsa = Self.rsaAlgorithms.first(where: offered.contains) { plan.append([rsa]) }
        pending = plan
    }
}
