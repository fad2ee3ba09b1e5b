import FleetTrustCore

/// `diffie-hellman-group-exchange-sha256` and `-sha1` (RFC 4419) as OpenSSH's `kexgexc.c` runs it: ask for a
/// group of min < n < max bits, check the server's group is within those bounds, then a
/// Diffie-Hellman exchange in it. Hosts that allow only this method are real (old hardening guides).
final class GroupExchangeKeyAgreement: KeyAgreement {
    /// `DH_GRP_MIN` and `DH_GRP_MAX` of OpenSSH's `dh.h`.
    static let minimumBits: UInt32 = 2048, maximumBits: UInt32 = 8192

    /// The n of the request: `dh_estimate` of the bits the session keys need (`kex_choose_conf`).
    let preferredBits: UInt32
    private var exchange: DiffieHellmanGroup?

    init(negotiated: NegotiatedAlgorithms) {
        preferredBits = Self.estimate(bits: 8 * Self.neededBytes(cipher: negotiated.cipher, mac: negotiated.mac))
    }

    /// SSH_MSG_KEX_DH_GEX_REQUEST: min, n, max (`ssh -vvv` shows `2048<8192<8192` for chacha20).
    var firstMessage: [UInt8] {
        var writer = SSHWireWriter()
        writer.writeByte(KeyExchangeMessage.groupExchangeRequest)
        writer.writeUInt32(Self.minimumBits)
        writer.writeUInt32(preferredBits)
        writer.writeUInt32(Self.maximumBits)
        return writer.bytes
    }

    var replyMessage: UInt8 { KeyExchangeMessage.groupExchangeReply }
    var interimMessage: UInt8? { exchange == nil ? KeyExchangeMessage.groupExchangeGroup : nil }

    /// SSH_MSG_KEX_DH_GEX_GROUP, answered with SSH_MSG_KEX_DH_GEX_INIT. As `input_kex_dh_gex_group`:
    /// p and g must be non-negative mpints with nothing after them, p within min..max bits.
    func answer(_ payload: [UInt8]) throws(ProbeFailure) -> [UInt8] {
        guard payload.first == KeyExchangeMessage.groupExchangeGroup, exchange == nil else {
            throw KeyExchangeFailures.kexFailed("expected KEX_DH_GEX_GROUP, got message \(payload.first ?? 0)")
        }
        var reader = SSHWireReader(Array(payload.dropFirst()))
        guard let prime = try? reader.readString(limit: 2049), let generator = try? reader.readString(limit: 2049),
              reader.isAtEnd, prime.first.map({ $0 & 0x80 == 0 }) ?? true, generator.first.map({ $0 & 0x80 == 0 }) ?? true else {
            throw KeyExchangeFailures.kexFailed("malformed KEX_DH_GEX_GROUP")
        }
        let bits = DiffieHellmanGroup.bitLength(prime)
        guard bits >= Self.minimumBits, bits <= Self.maximumBits else {
            throw KeyExchangeFailures.kexFailed("the server's DH group of \(bits) bits is outside \(Self.minimumBits)-\(Self.maximumBits)")
        }
        let exchange = try DiffieHellmanGroup(prime: Array(prime.drop { $0 == 0 }), generator: Array(generator.drop { $0 == 0 }))
        self.exchange = exchange
        return KeyAgreementWire.message(KeyExchangeMessage.groupExchangeInit, value: exchange.publicValue, asMPInt: true)
    }

    /// min || n || max || p || g || e || f || K (RFC 4419 §3, as `kexgex_hash` writes them: every
    /// number re-encoded as an mpint, f too, unlike the fixed groups).
    func hashedValues(serverValue: [UInt8]) throws(ProbeFailure) -> [UInt8] {
        guard let exchange else { throw KeyExchangeFailures.kexFailed("KEX_DH_GEX_REPLY before KEX_DH_GEX_GROUP") }
        let secret = try exchange.sharedSecret(serverValue: serverValue)
        var writer = SSHWireWriter()
        writer.writeUInt32(Self.minimumBits)
        writer.writeUInt32(preferredBits)
        writer.writeUInt32(Self.maximumBits)
        for value in [exchange.prime, exchange.generator, exchange.publicValue, serverValue, secret] {
            writer.writeMPInt(unsigned: value)
        }
        return writer.bytes
    }

    /// OpenSSH's `dh_estimate` (dh.c).
    static func estimate(bits: Int) -> UInt32 {
        bits <= 112 ? 2048 : bits <= 128 ? 3072 : bits <= 192 ? 7680 : 8192
    }

    /// `dh_need` of `kex_choose_conf` for our cipher and MAC: the largest of the cipher's key
    /// length (14 for 3des), block size and IV length, and the MAC's key length (`cipher.c`, `mac.c`).
    static func neededBytes(cipher: String, mac: String) -> Int {
        let cipherBytes = cipher.hasPrefix("chacha20") ? 64 : cipher.hasPrefix("aes256") ? 32
            : cipher.hasPrefix("aes192") ? 24 : cipher.hasPrefix("3des") ? 14 : 16
        let macBytes = mac.hasPrefix("hmac-sha2-512") ? 64 : mac.hasPrefix("hmac-sha2-256") ? 32
            : mac.hasPrefix("hmac-sha1") ? 20 : mac.hasPrefix("umac") || mac.hasPrefix("hmac-md5") ? 16 : 0
        return max(cipherBytes, macBytes)
    }
}
