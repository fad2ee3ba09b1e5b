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
    func sharedSecret(serverPublicKey: [UInt8]) -> [UInt8]? {
        guard let secret = pair.sharedSecret(with: serverPublicKey), secret.count == 32, secret.contains(where: { $0 != 0 }) else {
            return nil
        }
        return secret
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
