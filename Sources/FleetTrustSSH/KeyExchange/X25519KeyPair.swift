import COpenSSL
import FleetTrustCore

/// Our X25519 key pair, with its derivation context made once, shared by the exchanges of one thread.
///
/// A fresh key pair costs a scalar multiplication and OpenSSL 3 a new key object (about 65 µs of
/// a core here, a tenth of a handshake's whole CPU), so every connection of a scan, the one that
/// decides which key `ssh` meets included, takes its thread's pair, replaced after
/// `EphemeralKeyLifetime.exchangesPerPair` exchanges (which says why that is safe). A pair is
/// used only on the thread that made it: its derivation context, like every `EVP_PKEY_CTX`, is
/// not thread-safe.
final class X25519KeyPair {
    /// Q_C, the 32-byte public value.
    let publicKey: [UInt8]
    private let key: OpaquePointer
    private let derivation: OpaquePointer

    /// A fresh key pair, made as `ssh` makes one (`kexc25519_keygen`): 32 random bytes from the
    /// private generator, wiped once the key holds them; nil when OpenSSL cannot make one.
    convenience init?() {
        var secret = [UInt8](repeating: 0, count: 32)
        defer { secret.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) } }
        guard RAND_priv_bytes(&secret, 32) == 1 else { return nil }
        self.init(secret: secret)
    }

    /// The pair of the private scalar `secret`: its public value is X25519(k, 9), by the same
    /// ladder every exchange uses (`OpenSSLKeys.x25519DerivationKey` says why not OpenSSL's key
    /// generation); nil for a wrong length or when OpenSSL cannot make it.
    init?(secret: [UInt8]) {
        guard let key = secret.withUnsafeBytes({ OpenSSLKeys.x25519DerivationKey(secret: $0) }) else { return nil }
        guard let derivation = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else {
            EVP_PKEY_free(key)
            return nil
        }
        guard EVP_PKEY_derive_init(derivation) == 1, let raw = Self.derive(derivation, with: OpenSSLKeys.x25519BasePoint) else {
            EVP_PKEY_CTX_free(derivation)
            EVP_PKEY_free(key)
            return nil
        }
        self.key = key
        self.derivation = derivation
        publicKey = raw
    }

    deinit {
        EVP_PKEY_CTX_free(derivation)
        EVP_PKEY_free(key)
    }

    /// This thread's pair for one more exchange, replaced after `EphemeralKeyLifetime.exchangesPerPair`.
    static func forExchange() -> X25519KeyPair? {
        guard let shelf = shelves.current else { return nil }
        if let pair = shelf.pair, shelf.uses < EphemeralKeyLifetime.exchangesPerPair {
            shelf.uses += 1
            return pair
        }
        guard let pair = X25519KeyPair() else { return nil }
        shelf.pair = pair
        shelf.uses = 1
        return pair
    }

    /// The raw 32-byte X25519 result with the server's Q_S; nil for a value of the wrong length.
    func sharedSecret(with serverPublicKey: [UInt8]) -> [UInt8]? {
        Self.derive(derivation, with: serverPublicKey)
    }

    /// X25519 of the key behind `derivation` and the 32-byte value `peerValue`.
    private static func derive(_ derivation: OpaquePointer, with peerValue: [UInt8]) -> [UInt8]? {
        // No separate public-key check of the peer (validate_peer 0): for X25519 OpenSSL's only
        // check is that a public value is present; a low-order point shows as the all-zero secret.
        peerValue.withUnsafeBytes { bytes in
            OpenSSLKeys.withX25519Peer(bytes) { peer -> [UInt8]? in
                var length = 32
                let secret = [UInt8](unsafeUninitializedCapacity: 32) { buffer, count in
                    count = EVP_PKEY_derive_set_peer_ex(derivation, peer, 0) == 1
                        && EVP_PKEY_derive(derivation, buffer.baseAddress, &length) == 1 && length == 32 ? 32 : 0
                }
                return secret.isEmpty ? nil : secret
            }
        }
    }

    private static let shelves = PerThread<Shelf> { Shelf() }

    /// One thread's pair and how many exchanges it has served.
    private final class Shelf {
        var pair: X25519KeyPair?
        var uses = 0
    }
}
