/// What one handshake attempt with one host established, as plain values.
///
/// Probes run libssh (or our own key-exchange client) on worker threads; only these values
/// leave the worker, so everything downstream (trust engine, dashboard, JSON) is pure.

/// The stage at which a probe failed, so that operators and programs can act on it.
public enum ProbeStage: String, Sendable, Codable, CaseIterable {
    case resolve, connect, banner, keyExchange = "key-exchange", cancelled
}

/// A typed probe failure: where, a stable code for programs, and one human sentence.
public struct ProbeFailure: Error, Hashable, Sendable, Codable, CustomStringConvertible {
    public var stage: ProbeStage
    /// Stable, machine-readable: `resolve-failed`, `connection-refused`, `connect-timeout`,
    /// `banner-timeout`, `not-ssh`, `connection-closed`, `kex-failed`, `kex-timeout`,
    /// `bad-signature`, `no-common-algorithm`, `cancelled`, `host-unreachable`.
    public var code: String
    /// Already sanitized: safe to print.
    public var message: String

    public init(stage: ProbeStage, code: String, message: String) {
        self.stage = stage
        self.code = code
        self.message = Sanitizer.clean(message, limit: 512)
    }

    public var description: String { "\(stage.rawValue): \(message)" }
}

/// What was negotiated in the handshake that produced a key.
public struct NegotiatedAlgorithms: Hashable, Sendable, Codable {
    public var hostKey: String
    public var keyExchange: String
    public var cipher: String
    public var mac: String

    enum CodingKeys: String, CodingKey {
        case hostKey = "host_key", keyExchange = "kex", cipher, mac
    }

    public init(hostKey: String, keyExchange: String, cipher: String, mac: String) {
        self.hostKey = hostKey
        self.keyExchange = keyExchange
        self.cipher = cipher
        self.mac = mac
    }
}

/// One host key a server proved it holds (the key exchange completed and its signature verified).
public struct DiscoveredKey: Hashable, Sendable {
    public var key: HostKey
    public var algorithms: NegotiatedAlgorithms?
    /// Round trip of the whole handshake, in milliseconds.
    public var handshakeMilliseconds: Double?

    public init(key: HostKey, algorithms: NegotiatedAlgorithms? = nil, handshakeMilliseconds: Double? = nil) {
        self.key = key
        self.algorithms = algorithms
        self.handshakeMilliseconds = handshakeMilliseconds
    }
}

/// Everything learned about one endpoint in one probe: keys proved, or why none could be.
public struct ProbeResult: Hashable, Sendable {
    public var host: String
    public var port: Int
    /// Numeric address actually connected to, when known.
    public var peerAddress: String?
    public var keys: [DiscoveredKey]
    /// Failures of individual attempts; with no keys, the first one is the host's failure.
    public var failures: [ProbeFailure]
    /// The server's identification string (`SSH-2.0-...`), sanitized and bounded.
    public var serverVersion: String?
    /// Pre-authentication banner text, sanitized and bounded.
    public var banner: String?

    public init(host: String, port: Int, peerAddress: String? = nil, keys: [DiscoveredKey] = [],
                failures: [ProbeFailure] = [], serverVersion: String? = nil, banner: String? = nil) {
        self.host = host
        self.port = port
        self.peerAddress = peerAddress
        self.keys = keys
        self.failures = failures
        self.serverVersion = serverVersion
        self.banner = banner
    }

    public var failure: ProbeFailure? { keys.isEmpty ? failures.first : nil }
}
