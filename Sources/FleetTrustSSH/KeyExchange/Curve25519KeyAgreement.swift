import COpenSSL
import FleetTrustCore

/// The client half of curve25519-sha256 (RFC 8731): an ephemeral X25519 key through OpenSSL and
/// the shared secret. The hybrid post-quantum method reuses its X25519 half.
///
/// Keys come from `OpenSSLKeys`, whose per-thread contexts spare OpenSSL 3 its algorithm look-ups
/// on every handshake; the arithmetic (two scalar multiplications) is all that is left per call.
final class Curve25519KeyAgreement: KeyAgreement {
    private let key: OpaquePointer
    /// Q_C, the 32-byte public value sent in SSH_MSG_KEX_ECDH_INIT.
    let publicKey: [UInt8]

    init() throws(ProbeFailure) {
        guard let key = OpenSSLKeys.generateX25519() else {
            throw KeyExchangeFailures.kexFailed("cannot create an X25519 key")
        }
        var length = 32
        let raw = [UInt8](unsafeUninitializedCapacity: 32) { buffer, count in
            count = EVP_PKEY_get_raw_public_key(key, buffer.baseAddress, &length) == 1 ? length : 0
        }
        guard raw.count == 32 else {
            EVP_PKEY_free(key)
            throw KeyExchangeFailures.kexFailed("cannot read the X25519 public key")
        }
        self.key = key
        self.publicKey = raw
    }

    deinit { EVP_PKEY_free(key) }

    /// The raw shared secret with the server's Q_S; nil for a malformed or low-order point
    /// (RFC 8731 §3: an all-zero result must abort the exchange).
    func sharedSecret(serverPublicKey: [UInt8]) -> [UInt8]? {
        // No separate public-key check of the peer (validate_peer 0): for X25519 OpenSSL's only
        // check is that a public value is present; a low-order point shows as the all-zero secret.
        let secret = serverPublicKey.withUnsafeBytes { bytes in
            OpenSSLKeys.withX25519Peer(bytes) { peer -> [UInt8]? in
                guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else { return nil }
                defer { EVP_PKEY_CTX_free(context) }
                var length = 32
                return [UInt8](unsafeUninitializedCapacity: 32) { buffer, count in
                    count = EVP_PKEY_derive_init(context) == 1 && EVP_PKEY_derive_set_peer_ex(context, peer, 0) == 1
                        && EVP_PKEY_derive(context, buffer.baseAddress, &length) == 1 && length == 32 ? 32 : 0
                }
            }
        }
        guard let secret, secret.count == 32, secret.contains(where: { $0 != 0 }) else { return nil }
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
