import COpenSSL
import Synchronization

/// A plain public key made into an OpenSSL key once, ready to check signatures.
///
/// Building an `EVP_PKEY` can cost more than a verification (an RSA key sets up its Montgomery
/// form on first use, an ECDSA key its curve), and a fleet cloned from one image presents the
/// same host key on many hosts, so `VerificationKeyCache` keeps recent ones by their exact blob.
/// A verification starts from a copy of a context already set up for this key and digest:
/// `EVP_DigestVerifyInit` looks the signature and digest algorithms up by name in OpenSSL 3's
/// provider store on every call (about 5 µs and a global lock here), a copy costs a tenth of that.
/// Unchecked-sendable: after `init` the OpenSSL key is only read, which OpenSSL allows from any
/// thread, and the set-up contexts are only touched under their lock.
final class VerificationKey: @unchecked Sendable {
    /// The plain key type that signs (for a certificate: the certified key's).
    let kind: KeyType
    /// RSA only: the modulus length without leading zeros, to which a shorter signature is padded.
    let modulusBytes: Int
    /// Security keys only: SHA-256 of the key's application, which every signature covers.
    let applicationHash: [UInt8]
    private let pkey: OpaquePointer
    /// `EVP_DigestVerifyInit`'s result per digest (keyed by the `EVP_MD` address, 0 for Ed25519),
    /// made on first use and only ever copied; touched only under `preparing`.
    private var prepared: [Int: OpaquePointer] = [:]
    private let preparing = Mutex(())

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
        let made: OpaquePointer?
        switch signer.kind {
        case .ed25519, .skEd25519:
            guard let point = try? fields.readString(limit: 64) else { return nil }
            made = point.withUnsafeBytes { OpenSSLKeys.rawPublicKey(.ed25519, $0) }
        case .ecdsaP256, .ecdsaP384, .ecdsaP521, .skEcdsaP256:
            let curve: OpenSSLKeys.ECCurveName = signer.kind == .ecdsaP384 ? .p384 : signer.kind == .ecdsaP521 ? .p521 : .p256
            guard (try? fields.readString(limit: 32)) != nil, let point = try? fields.readString(limit: 256) else { return nil }
            made = point.withUnsafeBytes { OpenSSLKeys.ecPublicKey(curve, point: $0) }
        case .rsa:
            guard let e = try? fields.readString(limit: 2048), let n = try? fields.readString(limit: 4096) else { return nil }
            modulusBytes = n.drop { $0 == 0 }.count
            guard modulusBytes > 0 else { return nil }
            made = n.withUnsafeBytes { modulus in e.withUnsafeBytes { OpenSSLKeys.rsaPublicKey(modulus: modulus, exponent: $0) } }
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
        self.pkey = made
    }

    deinit {
        for context in prepared.values { EVP_MD_CTX_free(context) }
        EVP_PKEY_free(pkey)
    }

    /// Checks a raw signature (already in OpenSSL's form) over `data`; `md` nil for Ed25519.
    func verify(signature: [UInt8], md: OpaquePointer?, data: [UInt8]) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard prepare(context, md: md) else { return false }
        return signature.withUnsafeBufferPointer { sig in
            data.withUnsafeBufferPointer { message in
                EVP_DigestVerify(context, sig.baseAddress, sig.count, message.baseAddress, message.count) == 1
            }
        }
    }

    /// Makes `context` a copy of this key's verification context for `md`, setting that up once.
    private func prepare(_ context: OpaquePointer, md: OpaquePointer?) -> Bool {
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
