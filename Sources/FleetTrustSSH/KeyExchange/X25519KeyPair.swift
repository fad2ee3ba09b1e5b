import Crypto
import FleetTrustCore

/// Our X25519 key pair, through swift-crypto, shared by the exchanges of one thread.
///
/// swift-crypto (BoringSSL's code) makes a key pair and does an X25519 operation in about half of
/// OpenSSL 3.0's time here (about 26 µs against 42-56 µs per operation), and it needs no key
/// objects or derivation contexts per thread. A fresh key pair still costs a scalar
/// multiplication, so every connection of a scan, the one that decides which key `ssh` meets
/// included, takes its thread's pair, replaced after `EphemeralKeyLifetime.exchangesPerPair`
/// exchanges (which says why that is safe).
final class X25519KeyPair {
    /// Q_C, the 32-byte public value.
    let publicKey: [UInt8]
    private let key: Curve25519.KeyAgreement.PrivateKey

    /// A fresh key pair, 32 random bytes as `ssh` makes one (`kexc25519_keygen`).
    convenience init() {
        self.init(key: Curve25519.KeyAgreement.PrivateKey())
    }

    /// The pair of the private scalar `secret` (RFC 7748's test vectors); nil for a wrong length.
    convenience init?(secret: [UInt8]) {
        guard let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: secret) else { return nil }
        self.init(key: key)
    }

    private init(key: Curve25519.KeyAgreement.PrivateKey) {
        self.key = key
        publicKey = Array(key.publicKey.rawRepresentation)
    }

    /// This thread's pair for one more exchange, replaced after `EphemeralKeyLifetime.exchangesPerPair`.
    static func forExchange() -> X25519KeyPair? {
        shelves.current?.served.take { X25519KeyPair() }
    }

    /// The raw 32-byte X25519 result with the server's Q_S; nil for a value of the wrong length.
    /// A low-order value is not refused here: it shows as the all-zero result, which the caller refuses.
    func sharedSecret(with serverPublicKey: [UInt8]) -> [UInt8]? {
        guard let peer = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: serverPublicKey),
              let secret = try? key.sharedSecretFromKeyAgreement(with: peer) else { return nil }
        return secret.withUnsafeBytes { Array($0) }
    }

    private static let shelves = PerThread<Shelf> { Shelf() }

    /// One thread's pair and how many exchanges it has served.
    private final class Shelf {
        var served = ServedKeyPair<X25519KeyPair>()
    }
}
