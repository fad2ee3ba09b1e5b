import COpenSSL
import Crypto
import Foundation
import Synchronization

/// A plain public key made ready to check signatures once, in the library that checks it fastest.
///
/// Ed25519 and ECDSA keys are swift-crypto's (BoringSSL's code: an Ed25519 check in about half
/// of OpenSSL 3.0's time here, a P-256 check in three quarters), RSA keys OpenSSL's. Building a key
/// can cost more than a verification (an RSA key sets up its Montgomery form on first use, an
/// ECDSA key its curve), and a fleet cloned from one image presents the same host key on many
/// hosts, so `VerificationKeyCache` keeps recent ones by their exact blob. An RSA verification
/// starts from a copy of a context already set up for this key and digest: `EVP_DigestVerifyInit`
/// looks the signature and digest algorithms up by name in OpenSSL 3's provider store on every
/// call (about 5 µs and a global lock here), a copy costs a tenth of that.
/// Unchecked-sendable: after `init` the keys are only read, which both libraries allow from any
/// thread, and the set-up RSA contexts are only touched under their lock.
final class VerificationKey: @unchecked Sendable {
    /// The plain key type that signs (for a certificate: the certified key's).
    let kind: KeyType
    /// RSA only: the modulus length without leading zeros, to which a shorter signature is padded.
    let modulusBytes: Int
    /// Security keys only: SHA-256 of the key's application, which every signature covers.
    let applicationHash: [UInt8]
    private let checker: Checker
    /// RSA only: `EVP_DigestVerifyInit`'s result per digest (keyed by the `EVP_MD` address), made
    /// on first use and only ever copied; touched only under `preparing`.
    private var prepared: [Int: OpaquePointer] = [:]
    private let preparing = Mutex(())

    /// The key in the library that checks its signatures.
    private enum Checker {
        case ed25519(Curve25519.Signing.PublicKey)
        case p256(P256.Signing.PublicKey)
        case p384(P384.Signing.PublicKey)
        case p521(P521.Signing.PublicKey)
        case rsa(OpaquePointer)
    }

    /// Builds the key that signs for `key` (the certified key, for a certificate); nil if OpenSSH
    /// would not verify with it.
    init?(_ key: HostKey) {
        let signer: HostKey
        if key.isCertificate {
            guard let certificate = try? HostCertificate(key) else { return nil }
            signer = certificate.key
        } else {
            signer = key
        }
        var fields = SSHWireReader(signer.blob)
        guard (try? fields.readString(limit: 128)) != nil else { return nil }
        var modulusBytes = 0
        var applicationHash: [UInt8] = []
        let made: Checker?
        switch signer.kind {
        case .ed25519, .skEd25519:
            guard let point = try? fields.readString(limit: 64) else { return nil }
            made = (try? Curve25519.Signing.PublicKey(rawRepresentation: point)).map { .ed25519($0) }
        case .ecdsaP256, .ecdsaP384, .ecdsaP521, .skEcdsaP256:
            // The uncompressed point 0x04 || x || y, checked to lie on the curve.
            guard (try? fields.readString(limit: 32)) != nil, let point = try? fields.readString(limit: 256) else { return nil }
            switch signer.kind {
            case .ecdsaP384: made = (try? P384.Signing.PublicKey(x963Representation: point)).map { .p384($0) }
            case .ecdsaP521: made = (try? P521.Signing.PublicKey(x963Representation: point)).map { .p521($0) }
            default: made = (try? P256.Signing.PublicKey(x963Representation: point)).map { .p256($0) }
            }
        case .rsa:
            guard let e = try? fields.readString(limit: 2048), let n = try? fields.readString(limit: 4096) else { return nil }
            modulusBytes = n.drop { $0 == 0 }.count
            guard modulusBytes > 0 else { return nil }
            made = n.withUnsafeBytes { modulus in e.withUnsafeBytes { OpenSSLKeys.rsaPublicKey(modulus: modulus, exponent: $0) } }
                .map { .rsa($0) }
        default:
            return nil
        }
        if signer.kind == .skEd25519 || signer.kind == .skEcdsaP256 {
            guard let application = try? fields.readString() else { return nil }
            applicationHash = Digest.sha256(application)
        }
        guard let made else { return nil }
        self.kind = signer.kind
        self.modulusBytes = modulusBytes
        self.applicationHash = applicationHash
        self.checker = made
    }

    deinit {
        for context in prepared.values { EVP_MD_CTX_free(context) }
        if case .rsa(let pkey) = checker { EVP_PKEY_free(pkey) }
    }

    /// ECDSA only: the byte length of each of the raw signature's two scalars (the curve's order).
    var ecdsaScalarBytes: Int {
        switch checker {
        case .p256: 32
        case .p384: 48
        case .p521: 66
        case .ed25519, .rsa: 0
        }
    }

    /// Checks `signature` over `data`. Its form is the key's: Ed25519's 64 bytes; ECDSA's raw
    /// r || s, each `ecdsaScalarBytes` long, over the curve's SSH digest (SHA-256, SHA-384,
    /// SHA-512 for P-256, P-384, P-521), which is the one swift-crypto applies; RSA's signature
    /// padded to the modulus length, over the digest `md`.
    func verify(signature: [UInt8], md: OpaquePointer?, data: [UInt8]) -> Bool {
        switch checker {
        case .ed25519(let key):
            return key.isValidSignature(signature, for: data)
        case .p256(let key):
            guard let raw = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
            return key.isValidSignature(raw, for: data)
        case .p384(let key):
            guard let raw = try? P384.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
            return key.isValidSignature(raw, for: data)
        case .p521(let key):
            guard let raw = try? P521.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
            return key.isValidSignature(raw, for: data)
        case .rsa(let pkey):
            guard md != nil, let context = EVP_MD_CTX_new() else { return false }
            defer { EVP_MD_CTX_free(context) }
            guard prepare(context, pkey: pkey, md: md) else { return false }
            return signature.withUnsafeBufferPointer { sig in
                data.withUnsafeBufferPointer { message in
                    EVP_DigestVerify(context, sig.baseAddress, sig.count, message.baseAddress, message.count) == 1
                }
            }
        }
    }

    /// Makes `context` a copy of this RSA key's verification context for `md`, setting that up once.
    private func prepare(_ context: OpaquePointer, pkey: OpaquePointer, md: OpaquePointer?) -> Bool {
        preparing.withLock { _ in
            let slot = Int(bitPattern: md)
            if let made = prepared[slot] { return EVP_MD_CTX_copy_ex(context, made) == 1 }
            guard let made = EVP_MD_CTX_new() else { return false }
            guard EVP_DigestVerifyInit(made, nil, md, nil, pkey) == 1 else {
                EVP_MD_CTX_free(made)
                return false
            }
            prepared[slot] = made
            return EVP_MD_CTX_copy_ex(context, made) == 1
        }
    }
}
