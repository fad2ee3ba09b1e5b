import COpenSSL
import FleetTrustCore

/// The client half of `ecdh-sha2-nistp256/384/521` (RFC 5656 §4), the only key exchanges a host
/// in FIPS mode speaks: an ephemeral key on the curve through OpenSSL, and the shared secret with
/// the server's point once that point passes the checks OpenSSH makes.
final class ECDHKeyAgreement: KeyAgreement {
    private let key: OpaquePointer
    private let curve: OpenSSLKeys.ECCurveName
    /// Q_C, the uncompressed point sent in SSH_MSG_KEX_ECDH_INIT.
    let publicKey: [UInt8]

    init(curve: OpenSSLKeys.ECCurveName) throws(ProbeFailure) {
        guard let key = OpenSSLKeys.generateEC(curve) else {
            throw KeyExchangeFailures.kexFailed("cannot create an ECDH key")
        }
        var length = 0
        let point = [UInt8](unsafeUninitializedCapacity: 133) { buffer, count in
            count = EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, buffer.baseAddress,
                                                    buffer.count, &length) == 1 ? length : 0
        }
        guard point.first == 4 else {
            EVP_PKEY_free(key)
            throw KeyExchangeFailures.kexFailed("cannot read the ECDH public key")
        }
        self.key = key
        self.curve = curve
        self.publicKey = point
    }

    deinit { EVP_PKEY_free(key) }

    var firstMessage: [UInt8] { KeyAgreementWire.message(KeyExchangeMessage.ecdhInit, value: publicKey) }
    var replyMessage: UInt8 { KeyExchangeMessage.ecdhReply }

    /// Q_C || Q_S || K, K being the x coordinate of the shared point as an mpint (RFC 5656 §4).
    /// Q_S must be on the curve and not degenerate (`kex_ecdh_dec_key_group` in OpenSSH's `kexecdh.c`).
    func hashedValues(serverValue: [UInt8]) throws(ProbeFailure) -> [UInt8] {
        guard let peer = OpenSSLKeys.validatedECPeer(curve, point: serverValue) else {
            throw KeyExchangeFailures.kexFailed("the server's ECDH public point is invalid")
        }
        defer { EVP_PKEY_free(peer) }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else {
            throw KeyExchangeFailures.kexFailed("cannot derive the ECDH secret")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var length = 66
        let secret = [UInt8](unsafeUninitializedCapacity: 66) { buffer, count in
            count = EVP_PKEY_derive_init(context) == 1 && EVP_PKEY_derive_set_peer_ex(context, peer, 0) == 1
                && EVP_PKEY_derive(context, buffer.baseAddress, &length) == 1 ? length : 0
        }
        guard !secret.isEmpty else { throw KeyExchangeFailures.kexFailed("cannot derive the ECDH secret") }
        return KeyAgreementWire.pointsAndSecret(client: publicKey, server: serverValue, secret: secret)
    }
}
