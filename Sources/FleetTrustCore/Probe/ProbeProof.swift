/// What a probe proved about an endpoint, by protocol: the host keys of an SSH server or the
/// handshake of a TLS one, never both.
///
/// A sum rather than optional fields side by side, so that a TLS result cannot carry SSH keys
/// (nor an SSH result a certificate chain) and each reader says which protocol it reads.
public enum ProbeProof: Hashable, Sendable {
    /// Nothing was proved yet: the probe failed before a key exchange or a handshake, or was not run.
    case none
    case ssh(SSHProof)
    case tls(TLSHandshake)

    /// Whether anything was proved: a key (even a malformed one) or a completed handshake. A
    /// server's algorithm lists alone prove nothing: the probe's failure stands.
    public var provesSomething: Bool {
        switch self {
        case .none: false
        case .ssh(let proof): !proof.keys.isEmpty || !proof.malformedKeys.isEmpty
        case .tls: true
        }
    }
}

/// What an SSH server proved and said in its key exchanges: the keys it holds and the lists its
/// KEXINIT offered, which with the client's order decide which key `ssh` meets.
public struct SSHProof: Hashable, Sendable {
    public var keys: [DiscoveredKey]
    /// Host keys the server proved it holds that cannot be decoded as what they claim to be (a
    /// certificate with a broken body): evidence of a broken or hostile server, never dropped.
    public var malformedKeys: [MalformedHostKey]
    /// The host-key algorithms the server's KEXINIT offered, in its order, when a key exchange
    /// got that far: with the client's order they decide which key `ssh` meets.
    public var serverHostKeyAlgorithms: [String]?
    /// The key exchange methods the server's KEXINIT offered, when one was read: with what `ssh`
    /// offers the host they decide whether `ssh` could agree a method at all.
    public var serverKeyExchangeAlgorithms: [String]?
    /// The key types the server offers that a connection of their own asked for and did not
    /// get, each with that connection's failure: the keys above are then not all the server's.
    public var unfetched: [UnfetchedKeyType]

    public init(keys: [DiscoveredKey] = [], malformedKeys: [MalformedHostKey] = [],
                serverHostKeyAlgorithms: [String]? = nil, serverKeyExchangeAlgorithms: [String]? = nil,
                unfetched: [UnfetchedKeyType] = []) {
        self.keys = keys
        self.malformedKeys = malformedKeys
        self.serverHostKeyAlgorithms = serverHostKeyAlgorithms
        self.serverKeyExchangeAlgorithms = serverKeyExchangeAlgorithms
        self.unfetched = unfetched
    }

    /// Nothing learned: no key, no list.
    var isEmpty: Bool {
        keys.isEmpty && malformedKeys.isEmpty && serverHostKeyAlgorithms == nil && serverKeyExchangeAlgorithms == nil
            && unfetched.isEmpty
    }
}

/// A host-key algorithm the server offers whose key the probe asked for, on a connection of its
/// own, and did not get: the connection failed (closed, timed out, a signature that does not
/// verify), or it was never made because an earlier failure ended the probe. The key `ssh`
/// meets decides the host's status; this says the scan did not see all the others, so a changed
/// key of this type would go unreported in this scan.
public struct UnfetchedKeyType: Hashable, Sendable {
    /// The algorithm the connection asked for (`ecdsa-sha2-nistp256`, `rsa-sha2-512`), cleaned:
    /// a recorded scan's is a document's text.
    public var algorithm: CleanText
    public var failure: ProbeFailure

    /// At most this many are kept (a server offers a dozen types at most; a document may say more).
    public static let limit = 32

    public init(algorithm: String, failure: ProbeFailure) {
        self.algorithm = CleanText(algorithm, limit: 64)
        self.failure = failure
    }
}
