import COpenSSL

/// Builds OpenSSL keys without OpenSSL 3's per-call algorithm look-ups.
///
/// `EVP_PKEY_new_raw_public_key_ex`, `EVP_PKEY_CTX_new_from_name` and a key built from parameters
/// each look the algorithm up in the provider store (name maps, locks) and an ECDSA key sets its
/// curve up afresh: on a scan that is several microseconds per handshake, more than some
/// verifications cost. Each thread keeps the contexts it needs instead (`EVP_PKEY_CTX` is not
/// thread-safe, so they are never shared). The keys returned are the caller's to free.
public enum OpenSSLKeys {
    /// Raw 32-byte public keys: Ed25519 host keys and X25519 exchange values.
    public enum RawAlgorithm: Int, CaseIterable, Sendable {
        case ed25519, x25519
        var name: String { self == .ed25519 ? "ED25519" : "X25519" }
    }

    /// A public key from its raw bytes; nil for a wrong length.
    public static func rawPublicKey(_ algorithm: RawAlgorithm, _ bytes: UnsafeRawBufferPointer) -> OpaquePointer? {
        guard bytes.count == 32, let context = workspace.current?.fromData[algorithm.rawValue] else { return nil }
        return fleettrust_public_key_from_octets(context, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
    }

    /// Runs `body` with an X25519 public key holding `bytes` (nil for a wrong length): this
    /// thread's one peer key, its value replaced in place, which spares OpenSSL 3 a new key
    /// object per exchange and the search of its key-type tables by name that each new key
    /// costs. The key holds `bytes` only inside `body`: a derivation context that keeps a
    /// reference to it past `body` (`X25519KeyPair`'s) sets it as its peer again before each use.
    public static func withX25519Peer<Result>(_ bytes: UnsafeRawBufferPointer, _ body: (OpaquePointer) -> Result?) -> Result? {
        guard bytes.count == 32, let local = workspace.current,
              let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        if let peer = local.x25519Peer {
            guard EVP_PKEY_set_octet_string_param(peer, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, base, 32) == 1 else { return nil }
            return body(peer)
        }
        guard let peer = fleettrust_public_key_from_octets(local.fromData[RawAlgorithm.x25519.rawValue], base, 32) else { return nil }
        local.x25519Peer = peer
        return body(peer)
    }

    /// An X25519 key holding the private scalar `secret` (32 bytes), for derivation only: its
    /// public half is a placeholder, never read. OpenSSL 3.0 makes a key's public value by an
    /// Edwards base-point multiplication in portable C that costs more than its X25519 ladder in
    /// assembly (50–70 µs against 46–58 µs here for the key, its context and its public value),
    /// so the caller derives the public value with the key itself, X25519(k, 9), as RFC 7748
    /// defines it.
    public static func x25519DerivationKey(secret: UnsafeRawBufferPointer) -> OpaquePointer? {
        guard secret.count == 32, let context = workspace.current?.fromData[RawAlgorithm.x25519.rawValue],
              let base = secret.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        return x25519BasePoint.withUnsafeBufferPointer { fleettrust_x25519_key_from_secret(context, base, $0.baseAddress) }
    }

    /// The u-coordinate 9 of X25519's base point (RFC 7748 §4.1), little-endian.
    public static let x25519BasePoint: [UInt8] = [9] + [UInt8](repeating: 0, count: 31)

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

    /// An ECDSA public key: a copy of this thread's key on the curve with the point replaced, which
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
        let fromData: [OpaquePointer]
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
        /// The X25519 peer key `withX25519Peer` refills, made by its first use.
        var x25519Peer: OpaquePointer?

        init?() {
            func fetched(_ name: String) -> OpaquePointer? {
                guard let context = EVP_PKEY_CTX_new_from_name(nil, name, nil) else { return nil }
                guard EVP_PKEY_fromdata_init(context) == 1 else { EVP_PKEY_CTX_free(context); return nil }
                return context
            }
            let raw = RawAlgorithm.allCases.map { fetched($0.name) }
            let ec = fetched("EC"), rsa = fetched("RSA")
            guard let ec, let rsa, raw.allSatisfy({ $0 != nil }) else {
                for context in raw + [ec, rsa] { EVP_PKEY_CTX_free(context) }
                return nil
            }
            fromData = raw.compactMap { $0 }
            ecFromData = ec
            rsaFromData = rsa
        }

        deinit {
            for context in fromData + [ecFromData, rsaFromData] { EVP_PKEY_CTX_free(context) }
            for key in ecTemplates + [x25519Peer] { EVP_PKEY_free(key) }
            for context in ecGeneratorStore { EVP_PKEY_CTX_free(context) }
        }
    }
}
