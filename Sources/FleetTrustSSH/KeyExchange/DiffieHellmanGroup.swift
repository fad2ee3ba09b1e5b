import COpenSSL
import FleetTrustCore

/// One ephemeral Diffie-Hellman exchange in a group (p, g), with OpenSSL's BIGNUM arithmetic and
/// the checks OpenSSH's `dh.c` makes on both public values.
///
/// Shared by the fixed groups of RFC 8268 and the group a server picks in a group exchange
/// (RFC 4419). Values cross this type's boundary as big-endian magnitudes, never as BIGNUMs.
final class DiffieHellmanGroup {
    /// The bit length of our secret exponent: OpenSSH's `dh_gen_key` asks for twice the bits the
    /// session keys need (at most 512 with the ciphers and MACs we offer), below the size of p.
    static let exponentBits = 1024

    let prime: [UInt8]
    let generator: [UInt8]
    /// e = g^x mod p, sent in KEXDH_INIT or KEX_DH_GEX_INIT.
    let publicValue: [UInt8]
    private let p: OpaquePointer
    private let x: OpaquePointer
    private let context: OpaquePointer

    /// A fresh exponent in the group of `prime` and `generator` (magnitudes).
    init(prime: [UInt8], generator: [UInt8]) throws(ProbeFailure) {
        guard let context = BN_CTX_new() else { throw KeyExchangeFailures.kexFailed("cannot start a DH exchange") }
        let p = Self.number(prime), g = Self.number(generator), x = BN_new(), e = BN_new()
        defer { BN_free(g); BN_free(e) }
        let bits = Int(BN_num_bits(p))
        guard let p, let g, let x, let e, bits > 1,
              BN_priv_rand(x, Int32(min(Self.exponentBits, bits - 1)), BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ANY) == 1,
              BN_mod_exp_mont_consttime(e, g, x, p, context, nil) == 1,
              Self.isValidPublic(e, p: p, context: context) else {
            BN_free(p)
            BN_clear_free(x)
            BN_CTX_free(context)
            throw KeyExchangeFailures.kexFailed("cannot make a DH public value in the server's group")
        }
        self.prime = prime
        self.generator = generator
        self.publicValue = Self.magnitude(e)
        self.p = p
        self.x = x
        self.context = context
    }

    deinit {
        BN_free(p)
        BN_clear_free(x)
        BN_CTX_free(context)
    }

    /// The number of bits of a magnitude, as `BN_num_bits` counts them.
    static func bitLength(_ magnitude: [UInt8]) -> Int {
        guard let index = magnitude.firstIndex(where: { $0 != 0 }) else { return 0 }
        return (magnitude.count - index - 1) * 8 + (8 - magnitude[index].leadingZeroBitCount)
    }

    /// K = f^x mod p, after `dh_pub_is_valid` accepts f (as `kex_dh_compute_key` does).
    func sharedSecret(serverValue: [UInt8]) throws(ProbeFailure) -> [UInt8] {
        if let first = serverValue.first, first & 0x80 != 0 {
            throw KeyExchangeFailures.kexFailed("the server's DH public value is negative")
        }
        guard let f = Self.number(serverValue) else { throw KeyExchangeFailures.kexFailed("cannot read the server's DH value") }
        defer { BN_free(f) }
        guard Self.isValidPublic(f, p: p, context: context) else {
            throw KeyExchangeFailures.kexFailed("the server's DH public value is invalid")
        }
        guard let k = BN_new() else { throw KeyExchangeFailures.kexFailed("cannot derive the DH secret") }
        defer { BN_clear_free(k) }
        guard BN_mod_exp_mont_consttime(k, f, x, p, context, nil) == 1 else {
            throw KeyExchangeFailures.kexFailed("cannot derive the DH secret")
        }
        return Self.magnitude(k)
    }

    /// OpenSSH's `dh_pub_is_valid` (dh.c): 1 < y < p-1, and at least 4 bits set (with g = 2 a
    /// value with one bit set would give the exponent away).
    private static func isValidPublic(_ y: OpaquePointer, p: OpaquePointer, context: OpaquePointer) -> Bool {
        guard BN_is_negative(y) == 0, BN_cmp(y, BN_value_one()) == 1, let pMinusOne = BN_dup(p) else { return false }
        defer { BN_free(pMinusOne) }
        guard BN_sub_word(pMinusOne, 1) == 1, BN_cmp(y, pMinusOne) == -1 else { return false }
        var set = 0
        for bit in 0...BN_num_bits(y) where BN_is_bit_set(y, bit) == 1 {
            set += 1
            if set >= 4 { return true }
        }
        return false
    }

    private static func number(_ magnitude: [UInt8]) -> OpaquePointer? {
        magnitude.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
    }

    private static func magnitude(_ number: OpaquePointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Int((BN_num_bits(number) + 7) / 8)) { buffer, count in
            count = Int(BN_bn2bin(number, buffer.baseAddress))
        }
    }
}

/// `diffie-hellman-group14-sha256`, `group16-sha512` and `group18-sha512` (RFC 8268), and the
/// SHA-1 `group14-sha1` and `group1-sha1` (RFC 4253): the fixed MODP groups of RFC 3526 (and
/// RFC 2409's 1024-bit group), taken from OpenSSL, with KEXDH_INIT / KEXDH_REPLY (RFC 4253 §8).
final class DiffieHellmanKeyAgreement: KeyAgreement {
    enum Group {
        case group1, group14, group16, group18

        /// The RFC 3526 prime, as OpenSSL holds it.
        var prime: [UInt8] {
            let number: OpaquePointer? = switch self {
            case .group1: BN_get_rfc2409_prime_1024(nil)
            case .group14: BN_get_rfc3526_prime_2048(nil)
            case .group16: BN_get_rfc3526_prime_4096(nil)
            case .group18: BN_get_rfc3526_prime_8192(nil)
            }
            guard let number else { return [] }
            defer { BN_free(number) }
            return [UInt8](unsafeUninitializedCapacity: Int((BN_num_bits(number) + 7) / 8)) { buffer, count in
                count = Int(BN_bn2bin(number, buffer.baseAddress))
            }
        }
    }

    private let exchange: DiffieHellmanGroup

    init(group: Group) throws(ProbeFailure) {
        exchange = try DiffieHellmanGroup(prime: group.prime, generator: [2])
    }

    var firstMessage: [UInt8] { KeyAgreementWire.message(KeyExchangeMessage.dhInit, value: exchange.publicValue, asMPInt: true) }
    var replyMessage: UInt8 { KeyExchangeMessage.dhReply }

    /// mpint e || f || mpint K (RFC 4253 §8). As OpenSSH's `kex_gen_hash` (kexgen.c), f enters the
    /// hash as the string the server sent, not re-encoded: an mpint with a superfluous leading
    /// zero is read as the same number, and hashed as sent.
    func hashedValues(serverValue: [UInt8]) throws(ProbeFailure) -> [UInt8] {
        let secret = try exchange.sharedSecret(serverValue: serverValue)
        var writer = SSHWireWriter()
        writer.writeMPInt(unsigned: exchange.publicValue)
        writer.writeString(serverValue)
        writer.writeMPInt(unsigned: secret)
        return writer.bytes
    }
}
