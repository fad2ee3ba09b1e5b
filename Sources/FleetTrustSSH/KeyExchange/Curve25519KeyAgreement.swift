import COpenSSL
import FleetTrustCore

/// The client half of curve25519-sha256 (RFC 8731): an ephemeral X25519 key through OpenSSL,
/// the shared secret, and the exchange hash the server must sign.
struct Curve25519KeyAgreement: ~Copyable {
    private let key: OpaquePointer
    /// Q_C, the 32-byte public value sent in SSH_MSG_KEX_ECDH_INIT.
    let publicKey: [UInt8]

    init() throws(ProbeFailure) {
        // By name: OpenSSL 3 maps a numeric id to its name by walking every algorithm name.
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "X25519", nil) else {
            throw KeyExchangeFailures.kexFailed("cannot create an X25519 key")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var made: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_keygen(context, &made) == 1, let key = made else {
            throw KeyExchangeFailures.kexFailed("cannot create an X25519 key")
        }
        var raw = [UInt8](repeating: 0, count: 32)
        var length = raw.count
        guard EVP_PKEY_get_raw_public_key(key, &raw, &length) == 1, length == 32 else {
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
        guard serverPublicKey.count == 32 else { return nil }
        let made = serverPublicKey.withUnsafeBufferPointer {
            EVP_PKEY_new_raw_public_key_ex(nil, "X25519", nil, $0.baseAddress, $0.count)
        }
        guard let peer = made else { return nil }
        defer { EVP_PKEY_free(peer) }
        guard let context = EVP_PKEY_CTX_new(key, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        var secret = [UInt8](repeating: 0, count: 32)
        var length = secret.count
        guard EVP_PKEY_derive_init(context) == 1, EVP_PKEY_derive_set_peer(context, peer) == 1,
              EVP_PKEY_derive(context, &secret, &length) == 1, length == 32,
              secret.contains(where: { $0 != 0 }) else { return nil }
        return secret
    }

    /// H = SHA256(V_C || V_S || I_C || I_S || K_S || Q_C || Q_S || K), RFC 5656 §4 with RFC 8731's K.
    static func exchangeHash(clientVersion: [UInt8], serverVersion: [UInt8], clientKexInit: [UInt8],
                             serverKexInit: [UInt8], hostKeyBlob: [UInt8], clientPublicKey: [UInt8],
                             serverPublicKey: [UInt8], sharedSecret: [UInt8]) -> [UInt8] {
        var writer = SSHWireWriter()
        for field in [clientVersion, serverVersion, clientKexInit, serverKexInit, hostKeyBlob, clientPublicKey, serverPublicKey] {
            writer.writeString(field)
        }
        writer.writeMPInt(unsigned: sharedSecret)
        return Digest.sha256(writer.bytes)
    }
}
