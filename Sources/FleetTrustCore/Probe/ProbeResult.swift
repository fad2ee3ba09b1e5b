import Foundation

/// What one handshake attempt with one host established, as plain values.
///
/// Probes run libssh (or our own key-exchange client) on worker threads; only these values
/// leave the worker, so everything downstream (trust engine, dashboard, JSON) is pure.

/// Why a probe (or the judge, for stage `host-key`) failed, as a stable code for programs.
public enum FailureCode: String, Sendable, Codable, CaseIterable {
    case resolveFailed = "resolve-failed"
    case connectionRefused = "connection-refused"
    case connectTimeout = "connect-timeout"
    case hostUnreachable = "host-unreachable"
    case bannerTimeout = "banner-timeout"
    case notSSH = "not-ssh"
    case connectionClosed = "connection-closed"
    case kexFailed = "kex-failed"
    case kexTimeout = "kex-timeout"
    case badSignature = "bad-signature"
    case noCommonAlgorithm = "no-common-algorithm"
    /// A connection that asked for one host-key type proved a key of another (the address leads
    /// to servers with different keys, as a load-balanced pool in a rollout): only in the list
    /// of key types a probe could not fetch.
    case otherKeyType = "other-key-type"
    case cancelled
    /// `ssh` reaches the host through a proxy that fleettrust does not follow.
    case proxied
    /// Stage `proxy`: `ssh` refused a bastion's host key (new, changed or revoked, as
    /// `StrictHostKeyChecking=yes` judges it).
    case bastionKeyNotTrusted = "bastion-key-not-trusted"
    /// Stage `proxy`: the bastion refused the user's keys, agent and certificates.
    case bastionAuthFailed = "bastion-auth-failed"
    /// Stage `proxy`: the bastion refused to forward to the host (`AllowTcpForwarding`, `PermitOpen`).
    case forwardingRefused = "forwarding-refused"
    /// Stage `proxy`: the ProxyCommand exited (or could not be run) before the host spoke SSH.
    case proxyCommandFailed = "proxy-command-failed"
    /// Stage `proxy`: a hop did not answer, refused the connection, or timed out.
    case hopUnreachable = "hop-unreachable"
    /// Stage `proxy`: a name, address, user or jump hop of the host is one `ssh` refuses on its
    /// command line (shell metacharacters, a leading `-`): nothing was run for the host.
    case unsafeName = "unsafe-name"
    /// Stage `proxy`: the host's ProxyJump (or `-J`) does not parse, as `ssh` refuses it; the host
    /// was not probed, directly or otherwise.
    case invalidRoute = "invalid-route"
    /// Stage `proxy`: the host's ProxyCommand comes from an inventory (data, which may come from a
    /// CMDB or cloud tags), and fleettrust runs one only from the user's own ssh configuration
    /// or when told to (`--allow-inventory-proxy-command`): nothing was run for the host.
    case proxyCommandNotAllowed = "proxy-command-not-allowed"
    /// `ssh` offers no host-key algorithm the server has (for example a server with only
    /// `ssh-rsa`, SHA-1, which OpenSSH 9.2 no longer offers).
    case noMatchingHostKeyType = "no-matching-host-key-type"
    /// The key `ssh` would meet is an RSA key under 1024 bits, which `ssh` refuses.
    case rsaKeyTooShort = "rsa-key-too-short"
    /// The probe did not fetch the key `ssh` would meet, so no verdict can be given.
    case negotiatedKeyNotProbed = "negotiated-key-not-probed"
    /// TLS: the handshake failed (OpenSSL's reason in the message), timed out, the peer does
    /// not speak TLS, or it sent no certificate.
    case tlsHandshakeFailed = "tls-handshake-failed"
    case tlsTimeout = "tls-timeout"
    case notTLS = "not-tls"
    case noCertificate = "no-certificate"
    /// STARTTLS (stage `tls-handshake`, before the handshake): the server does not offer the
    /// upgrade (not in its capabilities, or refused when asked), broke the protocol, or stopped
    /// answering part-way.
    case startTLSNotOffered = "starttls-not-offered"
    case startTLSFailed = "starttls-failed"
    case startTLSTimeout = "starttls-timeout"
    /// Anything else (a recorded scan with a code this version does not know).
    case other
}

/// A typed probe failure: where, a stable code for programs, and one human sentence.
public struct ProbeFailure: Error, Hashable, Sendable, Codable, CustomStringConvertible {
    public var stage: ProbeStage
    public var code: FailureCode
    /// One sentence for people, cleaned where it was made.
    public var message: CleanText

    public init(stage: ProbeStage, code: FailureCode, message: String) {
        self.stage = stage
        self.code = code
        self.message = CleanText(message, limit: 512)
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

/// Everything learned about one endpoint in one probe: what it proved, or why nothing could be.
public struct ProbeResult: Hashable, Sendable {
    public var host: String
    public var port: Int
    /// Numeric address actually connected to, when known.
    public var peerAddress: String?
    /// The SSH keys or the TLS handshake the endpoint proved (see `ProbeProof`).
    public var proof: ProbeProof
    /// Failures of individual attempts; with nothing proved, the first one is the host's failure.
    public var failures: [ProbeFailure]
    /// The server's identification string (`SSH-2.0-...`), sanitized and bounded.
    public var serverVersion: String?
    /// Pre-authentication banner text, sanitized and bounded.
    public var banner: String?
    /// What the probe's one connection shaped like `ssh`'s came to (nil: none was made, as in a
    /// recorded scan): its key is the key `ssh` meets.
    public var sshConnection: SSHConnectionOutcome?
    /// What the host's `KnownHostsCommand` printed for these keys; nil when it was not run (no
    /// command, no key, or a replayed probe: a host with a command is then unchecked).
    public var knownHostsCommand: KnownHostsCommandOutput?
    /// Who made the probe and when it finished: the scanning machine's name (`--scanner-name`)
    /// and the time, as the scan document records them per host (`scanned_from`, `scanned_at`),
    /// so a merged document says which network proved which key. Nil until the scan says.
    public var scanner: CleanText?
    public var finishedAt: Date?

    public init(host: String, port: Int, peerAddress: String? = nil, proof: ProbeProof, failures: [ProbeFailure] = [],
                serverVersion: String? = nil, banner: String? = nil) {
        self.host = host
        self.port = port
        self.peerAddress = peerAddress
        self.proof = proof
        self.failures = failures
        self.serverVersion = serverVersion
        self.banner = banner
    }

    /// The result of an SSH probe (or of one that proved nothing: no key, no list).
    public init(host: String, port: Int, peerAddress: String? = nil, keys: [DiscoveredKey] = [],
                failures: [ProbeFailure] = [], serverVersion: String? = nil, banner: String? = nil,
                serverHostKeyAlgorithms: [String]? = nil, malformedKeys: [MalformedHostKey] = []) {
        self.init(host: host, port: port, peerAddress: peerAddress, proof: .none, failures: failures,
                  serverVersion: serverVersion, banner: banner)
        gatherSSH { $0 = SSHProof(keys: keys, malformedKeys: malformedKeys, serverHostKeyAlgorithms: serverHostKeyAlgorithms) }
    }

    public var failure: ProbeFailure? { proof.provesSomething ? nil : failures.first }

    /// The SSH proof, when the endpoint gave one.
    public var ssh: SSHProof? { if case .ssh(let proof) = proof { proof } else { nil } }
    /// The TLS handshake, when one completed.
    public var tls: TLSHandshake? { if case .tls(let handshake) = proof { handshake } else { nil } }
    /// The SSH keys proved (none for a TLS endpoint).
    public var keys: [DiscoveredKey] { ssh?.keys ?? [] }
    public var malformedKeys: [MalformedHostKey] { ssh?.malformedKeys ?? [] }
    public var serverHostKeyAlgorithms: [String]? { ssh?.serverHostKeyAlgorithms }
    public var serverKeyExchangeAlgorithms: [String]? { ssh?.serverKeyExchangeAlgorithms }

    /// Adds what an SSH probe learned to its proof (starting one); an empty proof stays `none`,
    /// so that a result equals the same result however it was built.
    public mutating func gatherSSH(_ learn: (inout SSHProof) -> Void) {
        var gathered = ssh ?? SSHProof()
        learn(&gathered)
        proof = gathered.isEmpty ? .none : .ssh(gathered)
    }
}

/// A host key blob the server sent (and signed the exchange with the key inside it) that does not
/// decode as the type it names: kept as bounded bytes so it can be judged, shown and replayed.
public struct MalformedHostKey: Hashable, Sendable {
    /// The algorithm it was negotiated under (cleaned).
    public var algorithm: CleanText
    /// The blob as sent, at most 16 KiB.
    public var blob: [UInt8]
    /// Why it does not decode.
    public var reason: CleanText

    public init(algorithm: String, blob: [UInt8], reason: String) {
        self.algorithm = CleanText(algorithm, limit: 64)
        self.blob = Array(blob.prefix(16 * 1024))
        self.reason = CleanText(reason, limit: 200)
    }
}
