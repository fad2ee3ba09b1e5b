import COpenSSL

/// Builds OpenSSL keys without OpenSSL 3's per-call algorithm look-ups.
///
/// `EVP_PKEY_CTX_new_from_name` and a key built from parameters each look the algorithm up in the
/// provider store (name maps, locks) and an EC key sets its curve up afresh: on a scan that is
/// several microseconds per handshake, more than some operations cost. Each thread keeps the
/// contexts it needs instead (`EVP_PKEY_CTX` is not thread-safe, so they are never shared).
/// The keys returned are the caller's to free. (X25519 and the Ed25519 and ECDSA checks are
/// swift-crypto's: `X25519KeyPair`, `VerificationKey`.)
public enum OpenSSLKeys {
    /// A fresh key pair on a NIST curve, for ECDH (`ecdh-sha2-nistp*`).
    public static func generateEC(_ curve: ECCurveName) -> OpaquePointer? {
        guard let context = workspace.current?.ecGenerator(curve) else { return nil }
        var key: OpaquePointer?
        return EVP_PKEY_keygen(context, &key) == 1 ? key : nil
    }

    /// The peer's public point for ECDH, only if it passes the checks OpenSSH makes on it
    /// (`sshkey_ec_validate_public`, as `kex_ecdh_dec_key_group` applies it); nil otherwise.
    public static func validatedECPeer(_ curve: ECCurveName, point: [UInt8]) -> OpaquePointer? {
        do {
            try ECPublicPoint.validate(point, curve: curve.checks)
        } catch {
            return nil
        }
        return point.withUnsafeBytes { ecPublicKey(curve, point: $0) }
    }

    /// An EC public key (an ECDH peer's): a copy of this thread's key on the curve with the point replaced, which
    /// skips setting the curve up again; OpenSSL checks the point is on the curve.
    static func ecPublicKey(_ curve: ECCurveName, point: UnsafeRawBufferPointer) -> OpaquePointer? {
        guard let local = workspace.current, let base = point.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        if let template = local.ecTemplates[curve.rawValue] {
            guard let key = EVP_PKEY_dup(template) else { return nil }
            guard EVP_PKEY_set_octet_string_param(key, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, base, point.count) == 1 else {
                EVP_PKEY_free(key)
                return nil
            }
            return key
        }
        guard let key = fleettrust_ec_public_key(local.ecFromData, curve.groupName, base, point.count) else { return nil }
        if EVP_PKEY_up_ref(key) == 1 { local.ecTemplates[curve.rawValue] = key }
        return key
    }

    /// An RSA public key from big-endian magnitudes (leading zeros allowed).
    static func rsaPublicKey(modulus: UnsafeRawBufferPointer, exponent: UnsafeRawBufferPointer) -> OpaquePointer? {
        guard let context = workspace.current?.rsaFromData, modulus.count <= Int(Int32.max), exponent.count <= Int(Int32.max) else { return nil }
        return fleettrust_rsa_public_key(context, modulus.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(modulus.count),
                                         exponent.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(exponent.count))
    }

    /// The NIST curves of `ecdsa-sha2-nistp*` and `ecdh-sha2-nistp*`, by OpenSSL's group names.
    public enum ECCurveName: Int, CaseIterable, Sendable {
        case p256, p384, p521
        var groupName: String { ["P-256", "P-384", "P-521"][rawValue] }
        var checks: ECPublicPoint.Curve { [ECPublicPoint.Curve.p256, .p384, .p521][rawValue] }
    }

    private static let workspace = PerThread<Workspace> { Workspace() }

    /// One thread's contexts, made once; the EC templates are filled by the first key on each curve.
    private final class Workspace {
        let ecFromData: OpaquePointer
        let rsaFromData: OpaquePointer
        /// Key-pair generators per curve, each made on first use.
        private var ecGeneratorStore: [OpaquePointer?] = Array(repeating: nil, count: ECCurveName.allCases.count)

        func ecGenerator(_ curve: ECCurveName) -> OpaquePointer? {
            if let made = ecGeneratorStore[curve.rawValue] { return made }
            guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { return nil }
            guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_group_name(context, curve.groupName) == 1 else {
                EVP_PKEY_CTX_free(context)
                return nil
            }
            ecGeneratorStore[curve.rawValue] = context
            return context
        }
        var ecTemplates: [OpaquePointer?] = Array(repeating: nil, count: ECCurveName.allCases.count)

        init?() {
            func fetched(_ name: String) -> OpaquePointer? {
                guard let context = EVP_PKEY_CTX_new_from_name(nil, name, nil) else { return nil }
                guard EVP_PKEY_fromdata_init(context) == 1 else { EVP_PKEY_CTX_free(context); return nil }
                return context
            }
            let ec = fetched("EC"), rsa = fetched("RSA")
            guard let ec, let rsa else {
                for context in [ec, rsa] { EVP_PKEY_CTX_free(context) }
                return nil
            }
            ecFromData = ec
            rsaFromData = rsa
        }

        deinit {
            for context in [ecFromData, rsaFromData] { EVP_PKEY_CTX_free(context) }
            for key in ecTemplates { EVP_PKEY_free(key) }
            for context in ecGeneratorStore { EVP_PKEY_CTX_free(context) }
        }
    }
}
