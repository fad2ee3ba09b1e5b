import FleetTrustCore

/// The client half of `sntrup761x25519-sha512@openssh.com`, OpenSSH's hybrid post-quantum key
/// exchange (its `kexsntrup761x25519.c`): an sntrup761 key pair and an X25519 key side by side,
/// so that a server configured with only this method can still prove its host keys to us. Both
/// halves are shared key pairs (the pool's sntrup761 one, this thread's X25519 one), each serving
/// up to `EphemeralKeyLifetime.exchangesPerPair` exchanges.
///
/// The wire and hash rules, as OpenSSH has them: Q_C = sntrup761 public key (1158 bytes) ||
/// X25519 public value (32) in SSH_MSG_KEX_ECDH_INIT; Q_S = ciphertext (1039) || X25519 value
/// (32) in SSH_MSG_KEX_ECDH_REPLY, any other length refused; K = SHA-512(KEM secret || X25519
/// secret), entering the SHA-512 exchange hash as a string, not an mpint; an all-zero X25519
/// secret is refused as for curve25519-sha256.
final class Sntrup761X25519KeyAgreement: KeyAgreement {
    private let secretKey: Sntrup761SecretKey
    private let x25519: Curve25519KeyAgreement
    /// Q_C: the sntrup761 public key, then the X25519 public value.
    let clientValue: [UInt8]

    init() throws(ProbeFailure) {
        guard let keyPair = Sntrup761KeyPool.take() else {
            throw KeyExchangeFailures.kexFailed("cannot create an sntrup761 key pair")
        }
        x25519 = try Curve25519KeyAgreement()
        secretKey = keyPair.secretKey
        clientValue = keyPair.publicKey + x25519.publicKey
    }

    var firstMessage: [UInt8] { KeyAgreementWire.message(KeyExchangeMessage.ecdhInit, value: clientValue) }
    var replyMessage: UInt8 { KeyExchangeMessage.ecdhReply }

    /// string Q_C || string Q_S || string K.
    func hashedValues(serverValue: [UInt8]) throws(ProbeFailure) -> [UInt8] {
        let expected = Sntrup761.ciphertextBytes + 32
        guard serverValue.count == expected else {
            throw KeyExchangeFailures.kexFailed("the server's sntrup761x25519 value is \(serverValue.count) bytes, not \(expected)")
        }
        guard let kemSecret = Sntrup761.decapsulate(ciphertext: Array(serverValue.prefix(Sntrup761.ciphertextBytes)),
                                                     key: secretKey) else {
            throw KeyExchangeFailures.kexFailed("the server's sntrup761 ciphertext cannot be read")
        }
        guard let x25519Secret = x25519.sharedSecret(serverPublicKey: Array(serverValue.suffix(32))) else {
            throw KeyExchangeFailures.kexFailed("the server's X25519 public value is invalid")
        }
        var writer = SSHWireWriter(capacity: clientValue.count + serverValue.count + 64 + 12)
        writer.writeString(clientValue)
        writer.writeString(serverValue)
        writer.writeString(Digest.sha512(kemSecret + x25519Secret))
        return writer.bytes
    }
}
