import FleetTrustCore

/// The client half of curve25519-sha256 (RFC 8731): an ephemeral X25519 key through swift-crypto and
/// the shared secret. The hybrid post-quantum method reuses its X25519 half.
///
/// The key pair is this thread's (`X25519KeyPair.forExchange`, shared by up to
/// `EphemeralKeyLifetime.exchangesPerPair` exchanges), so the
/// arithmetic (one scalar multiplication per exchange, two with a new pair) is nearly all that is
/// left per call.
final class Curve25519KeyAgreement: KeyAgreement {
    private let pair: X25519KeyPair

    init() throws(ProbeFailure) {
        guard let pair = X25519KeyPair.forExchange() else {
            throw KeyExchangeFailures.kexFailed("cannot create an X25519 key")
        }
        self.pair = pair
    }

    /// Q_C, the 32-byte public value sent in SSH_MSG_KEX_ECDH_INIT.
    var publicKey: [UInt8] { pair.publicKey }

    /// The raw shared secret with the server's Q_S; nil for a malformed or low-order point
    /// (RFC 8731 §3: an all-zero result must abort the exchange).
    /// The value is read as `ssh` reads it (`openSSHReading`); the exchange hash keeps the bytes
    /// the server sent.
    func sharedSecret(serverPublicKey: [UInt8]) -> [UInt8]? {
        guard let secret = pair.sharedSecret(with: Self.openSSHReading(serverPublicKey)), secret.count == 32,
              secret.contains(where: { $0 != 0 }) else {
            return nil
        }
        return secret
    }

    /// The server's X25519 value as OpenSSH's client reads it. `ssh`'s X25519
    /// (smult_curve25519_ref.c) keeps all 256 bits of the peer's value, so a set bit 255 counts as
    /// 2^255, which is 19 modulo p = 2^255 - 19; RFC 7748, and the library, clear that bit instead.
    /// A server whose value has bit 255 set thus agrees with `ssh` on a different secret than with
    /// the library: given `ssh`'s reading (the same number below 2^255, bit 255 replaced by 19
    /// more), we agree with it exactly when `ssh` does, and its signature proves the key here
    /// exactly when it proves it to `ssh`. Honest values are below p and pass unchanged.
    static func openSSHReading(_ value: [UInt8]) -> [UInt8] {
        guard value.count == 32, value[31] & 0x80 != 0 else { return value }
        var reading = value
        // Twice at most: the first sum is below 2^255 + 19, so a second carry into bit 255
        // leaves under 38.
        while reading[31] & 0x80 != 0 {
            reading[31] &= 0x7f
            var carry = 19
            for index in 0..<32 where carry != 0 {
                let sum = Int(reading[index]) + carry
                reading[index] = UInt8(truncatingIfNeeded: sum)
                carry = sum >> 8
            }
        }
        return reading
    }

    /// SSH_MSG_KEX_ECDH_INIT with Q_C.
    var firstMessage: [UInt8] { KeyAgreementWire.message(KeyExchangeMessage.ecdhInit, value: publicKey) }
    var replyMessage: UInt8 { KeyExchangeMessage.ecdhReply }

    /// Q_C || Q_S || K, RFC 5656 §4 with RFC 8731's K (the X25519 result as an mpint).
    func hashedValues(serverValue: [UInt8]) throws(ProbeFailure) -> [UInt8] {
        guard let secret = sharedSecret(serverPublicKey: serverValue) else {
            throw KeyExchangeFailures.kexFailed("the server's X25519 public value is invalid")
        }
        return KeyAgreementWire.pointsAndSecret(client: publicKey, server: serverValue, secret: secret)
    }
}
