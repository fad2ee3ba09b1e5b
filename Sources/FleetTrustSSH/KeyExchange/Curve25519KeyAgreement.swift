import COpenSSL
import FleetTrustCore

/// The client half of curve25519-sha256 (RFC 8731): an ephemeral X25519 key through OpenSSL,
/// the shared secret, and the exchange hash the server must sign.
///
/// Keys come from `OpenSSLKeys`, whose per-thread contexts spare OpenSSL 3 its algorithm look-ups
/// on every handshake; the arithmetic (two scalar multiplications) is all that is left per call.
struct Curve25519KeyAgreement: ~Copyable {
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
        guard serverPublicKey.count == 32,
              let peer = serverPublicKey.withUnsafeBytes({ OpenSSLKeys.rawPublicKey(.x25519, $0) }) else { return nil }
        defer { EVP_PKEY_free(peer) }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        // No separate public-key check of the peer (validate_peer 0): for X25519 OpenSSL's only
        // check is that a public value is present; a low-order point shows as the all-zero secret.
        var length = 32
        let secret = [UInt8](unsafeUninitializedCapacity: 32) { buffer, count in
            count = EVP_PKEY_derive_init(context) == 1 && EVP_PKEY_derive_set_peer_ex(context, peer, 0) == 1
                && EVP_PKEY_derive(context, buffer.baseAddress, &length) == 1 && length == 32 ? 32 : 0
        }
        guard secret.count == 32, secret.contains(where: { $0 != 0 }) else { return nil }
        return secret
    }

    /// H = SHA256(V_C || V_S || I_C || I_S || K_S || Q_C || Q_S || K), RFC 5656 §4 with RFC 8731's K.
    static func exchangeHash(clientVersion: [UInt8], serverVersion: [UInt8], clientKexInit: [UInt8],
                             serverKexInit: [UInt8], hostKeyBlob: [UInt8], clientPublicKey: [UInt8],
                             serverPublicKey: [UInt8], sharedSecret: [UInt8]) -> [UInt8] {
        let strings = [clientVersion, serverVersion, clientKexInit, serverKexInit, hostKeyBlob, clientPublicKey, serverPublicKey]
        var writer = SSHWireWriter(capacity: strings.reduce(4 * strings.count + 4 + 1 + sharedSecret.count) { $0 + $1.count })
        for field in strings { writer.writeString(field) }
        writer.writeMPInt(unsigned: sharedSecret)
        return Digest.sha256(writer.bytes)
    }
}
