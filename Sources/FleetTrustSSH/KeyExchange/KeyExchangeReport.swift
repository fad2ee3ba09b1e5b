import FleetTrustCore

/// Everything one run of `KeyExchangeProbe` learned, also when it failed part-way.
///
/// The server's host-key algorithm list tells which certificate types it could present even
/// when only one was fetched; its identification and preamble lines are already cleaned.
public struct KeyExchangeReport: Hashable, Sendable {
    /// The key the server proved it holds, or why it could not.
    public var outcome: Result<DiscoveredKey, ProbeFailure>
    /// The server's identification string (`SSH-2.0-...`), sanitized, at most 255 characters.
    public var serverVersion: String?
    /// Lines the server sent before its identification (at most 16), sanitized.
    public var serverPreamble: [String] = []
    /// The host-key algorithms of the server's KEXINIT (at most 64), sanitized.
    public var serverHostKeyAlgorithms: [String] = []
    /// The key exchange methods of the server's KEXINIT (at most 64), sanitized; nil before it.
    public var serverKeyExchangeAlgorithms: [String]?
    /// Numeric address of the peer, when connected.
    public var peerAddress: String?
    /// A certificate the server sent that does not decode, although the server proved it holds
    /// the key inside it: the outcome is then a failure, and this is the evidence.
    public var malformedKey: MalformedHostKey?

    public init(outcome: Result<DiscoveredKey, ProbeFailure>, serverVersion: String? = nil, serverPreamble: [String] = [],
                serverHostKeyAlgorithms: [String] = [], peerAddress: String? = nil) {
        self.outcome = outcome
        self.serverVersion = serverVersion
        self.serverPreamble = serverPreamble
        self.serverHostKeyAlgorithms = serverHostKeyAlgorithms
        self.peerAddress = peerAddress
    }
}
