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

    public init(keys: [DiscoveredKey] = [], malformedKeys: [MalformedHostKey] = [],
                serverHostKeyAlgorithms: [String]? = nil, serverKeyExchangeAlgorithms: [String]? = nil) {
        self.keys = keys
        self.malformedKeys = malformedKeys
        self.serverHostKeyAlgorithms = serverHostKeyAlgorithms
        self.serverKeyExchangeAlgorithms = serverKeyExchangeAlgorithms
    }

    /// Nothing learned: no key, no list.
    var isEmpty: Bool {
        keys.isEmpty && malformedKeys.isEmpty && serverHostKeyAlgorithms == nil && serverKeyExchangeAlgorithms == nil
    }
}
