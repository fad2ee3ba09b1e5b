import FleetTrustCore

/// The part of a key exchange that differs from one method to the next: what the client sends,
/// what it makes of the server's public value, and how both enter the exchange hash.
///
/// Everything around it (identification, KEXINIT, the reply's host key and signature) is the same
/// for every method, so `ExchangeSession` runs one state machine and asks the agreement only for
/// these. A method is added as one case of `KeyExchangeMethod` and one type conforming here.
protocol KeyAgreement: AnyObject {
    /// The payload (message number first) the client sends once the method is agreed.
    var firstMessage: [UInt8] { get }
    /// The message number of the server's reply carrying K_S, its public value and the signature.
    var replyMessage: UInt8 { get }
    /// The server message still awaited before the reply (the group of a group exchange), if any.
    var interimMessage: UInt8? { get }
    /// Takes the `interimMessage` and returns the payload to send next.
    func answer(_ payload: [UInt8]) throws(ProbeFailure) -> [UInt8]
    /// What follows K_S in the exchange hash: both public values as the method hashes them, then
    /// the shared secret K (an mpint, or a string for the hybrid post-quantum method). Throws when
    /// the server's value is invalid, as OpenSSH refuses it.
    func hashedValues(serverValue: [UInt8]) throws(ProbeFailure) -> [UInt8]
}

extension KeyAgreement {
    var interimMessage: UInt8? { nil }

    func answer(_ payload: [UInt8]) throws(ProbeFailure) -> [UInt8] {
        throw KeyExchangeFailures.kexFailed("expected message \(replyMessage), got message \(payload.first ?? 0)")
    }
}

/// The key-exchange methods our client speaks, in the order `ssh` 9.2 prefers them, except that
/// sntrup761x25519 comes after curve25519 and ECDH: its key pair costs about a hundred times the
/// CPU of an X25519 key, and the method changes nothing about which host key is proved. It has
/// two names: Debian's ssh 9.2 offers `sntrup761x25519-sha512` (the later standard name) before
/// `@openssh.com`, so a server configured with either one is met. The SHA-1 methods, which `ssh`
/// offers only when a host's `KexAlgorithms` enables them, are the SHA-2 ones with SHA-1 as the
/// exchange hash, so a host that enables them is met by our client as by `ssh`, not by libssh.
enum KeyExchangeMethod: String, CaseIterable, Sendable {
    case curve25519 = "curve25519-sha256"
    case curve25519LibSSH = "curve25519-sha256@libssh.org"
    case ecdhP256 = "ecdh-sha2-nistp256"
    case ecdhP384 = "ecdh-sha2-nistp384"
    case ecdhP521 = "ecdh-sha2-nistp521"
    case sntrup761x25519Standard = "sntrup761x25519-sha512"
    case sntrup761x25519 = "sntrup761x25519-sha512@openssh.com"
    case groupExchangeSHA256 = "diffie-hellman-group-exchange-sha256"
    case group16SHA512 = "diffie-hellman-group16-sha512"
    case group18SHA512 = "diffie-hellman-group18-sha512"
    case group14SHA256 = "diffie-hellman-group14-sha256"
    case groupExchangeSHA1 = "diffie-hellman-group-exchange-sha1"
    case group14SHA1 = "diffie-hellman-group14-sha1"
    case group1SHA1 = "diffie-hellman-group1-sha1"

    /// The hash of the exchange hash H (RFC 4253 §8, RFC 4419, RFC 5656 §6.2.1, RFC 8268, RFC 8731).
    var exchangeHash: ExchangeHash {
        switch self {
        case .groupExchangeSHA1, .group14SHA1, .group1SHA1: return .sha1
        case .curve25519, .curve25519LibSSH, .ecdhP256, .groupExchangeSHA256, .group14SHA256: return .sha256
        case .ecdhP384: return .sha384
        case .ecdhP521, .sntrup761x25519Standard, .sntrup761x25519, .group16SHA512, .group18SHA512: return .sha512
        }
    }

    /// A fresh client side of this method for one exchange; `negotiated` sizes a group exchange.
    /// curve25519 and the hybrid take shared key pairs (`EphemeralKeyLifetime`).
    func makeAgreement(_ negotiated: NegotiatedAlgorithms) throws(ProbeFailure) -> any KeyAgreement {
        switch self {
        case .curve25519, .curve25519LibSSH: return try Curve25519KeyAgreement()
        case .ecdhP256: return try ECDHKeyAgreement(curve: .p256)
        case .ecdhP384: return try ECDHKeyAgreement(curve: .p384)
        case .ecdhP521: return try ECDHKeyAgreement(curve: .p521)
        case .group14SHA256, .group14SHA1: return try DiffieHellmanKeyAgreement(group: .group14)
        case .group1SHA1: return try DiffieHellmanKeyAgreement(group: .group1)
        case .group16SHA512: return try DiffieHellmanKeyAgreement(group: .group16)
        case .group18SHA512: return try DiffieHellmanKeyAgreement(group: .group18)
        case .sntrup761x25519Standard, .sntrup761x25519: return try Sntrup761X25519KeyAgreement()
        case .groupExchangeSHA256, .groupExchangeSHA1: return GroupExchangeKeyAgreement(negotiated: negotiated)
        }
    }
}

/// How long our X25519 and sntrup761 key pairs live: each serves up to `exchangesPerPair` key
/// exchanges, the connection's that decides which key `ssh` meets included, then a new one is
/// made (this thread's X25519 pair, `X25519KeyPair.forExchange`; the process's sntrup761 key
/// pair, `Sntrup761KeyPool.take`). A key pair costs more than the rest of the exchange's
/// arithmetic (an sntrup761 one about 160 µs even in a batch, an X25519 one about 26 µs).
///
/// Nothing a scan proves is weaker for it. This client only probes: it checks the server's
/// signature over the exchange hash and disconnects before NEWKEYS, never using the exchange's
/// keys, so a shared secret that another connection could also reach protects nothing. Each
/// exchange hash covers our fresh 16-byte KEXINIT cookie, the server's, and the server's fresh
/// value, so a signature from one connection proves nothing on another. sntrup761 is a KEM
/// secure against chosen ciphertexts (implicit rejection: a forged ciphertext yields a secret
/// unrelated to the key), built for a key pair that decapsulates many ciphertexts, and X25519
/// with a reused scalar is static Diffie-Hellman. What a server learns is that up to this many
/// of its connections came from one scanner, which it can tell anyway by source address and
/// time. The bound keeps any one key pair's exposure small.
enum EphemeralKeyLifetime {
    static let exchangesPerPair = 32
}

/// One key pair in service and how many exchanges it has served: the bound of
/// `EphemeralKeyLifetime`, kept in one place for every holder of a shared pair (a thread's X25519
/// pair, the process's sntrup761 pair).
struct ServedKeyPair<Pair> {
    private var pair: Pair?
    private var uses = 0

    /// Whether the pair in service may serve one more exchange.
    var hasUsesLeft: Bool { pair != nil && uses < EphemeralKeyLifetime.exchangesPerPair }

    /// The pair for one more exchange: the one in service while it has uses left, else the one
    /// `next` makes, put in service (nil when it makes none).
    mutating func take(orNext next: () -> Pair?) -> Pair? {
        if hasUsesLeft, let pair {
            uses += 1
            return pair
        }
        guard let made = next() else { return nil }
        pair = made
        uses = 1
        return made
    }
}

/// The hash function of a key-exchange method, and the exchange hash H built with it.
enum ExchangeHash: Sendable {
    case sha1, sha256, sha384, sha512

    func digest(_ data: [UInt8]) -> [UInt8] {
        switch self {
        case .sha1: return Digest.sha1(data)
        case .sha256: return Digest.sha256(data)
        case .sha384: return Digest.sha384(data)
        case .sha512: return Digest.sha512(data)
        }
    }

    /// H = HASH(V_C || V_S || I_C || I_S || K_S || the method's values and K), each of the first
    /// five an SSH string.
    func exchangeHash(clientVersion: [UInt8], serverVersion: [UInt8], clientKexInit: [UInt8],
                      serverKexInit: [UInt8], hostKeyBlob: [UInt8], methodValues: [UInt8]) -> [UInt8] {
        let strings = [clientVersion, serverVersion, clientKexInit, serverKexInit, hostKeyBlob]
        var writer = SSHWireWriter(capacity: strings.reduce(4 * strings.count + methodValues.count) { $0 + $1.count })
        for field in strings { writer.writeString(field) }
        writer.writeRaw(methodValues)
        return digest(writer.bytes)
    }
}

/// The wire shapes the methods share: a message carrying one public value, and the values
/// that enter the exchange hash.
enum KeyAgreementWire {
    /// `message` with one public value: a string (ECDH, X25519, the hybrid) or an mpint (DH).
    static func message(_ number: UInt8, value: [UInt8], asMPInt: Bool = false) -> [UInt8] {
        var writer = SSHWireWriter(capacity: value.count + 6)
        writer.writeByte(number)
        if asMPInt { writer.writeMPInt(unsigned: value) } else { writer.writeString(value) }
        return writer.bytes
    }

    /// string Q_C || string Q_S || mpint K, the ECDH form of RFC 5656 §4.
    static func pointsAndSecret(client: [UInt8], server: [UInt8], secret: [UInt8]) -> [UInt8] {
        var writer = SSHWireWriter(capacity: client.count + server.count + secret.count + 13)
        writer.writeString(client)
        writer.writeString(server)
        writer.writeMPInt(unsigned: secret)
        return writer.bytes
    }
}

/// The method-specific message numbers (30-49, RFC 4250 §4.1.2): each method gives the same
/// numbers its own meaning, so they are constants rather than one enum's cases.
enum KeyExchangeMessage {
    static let ecdhInit: UInt8 = 30, ecdhReply: UInt8 = 31
    static let dhInit: UInt8 = 30, dhReply: UInt8 = 31
    static let groupExchangeGroup: UInt8 = 31, groupExchangeInit: UInt8 = 32
    static let groupExchangeReply: UInt8 = 33, groupExchangeRequest: UInt8 = 34
}
