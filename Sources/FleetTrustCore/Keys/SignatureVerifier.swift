import COpenSSL

/// Checks SSH signatures (RFC 4253 §6.6, RFC 5656, RFC 8332, RFC 8709) with OpenSSL.
///
/// A host key proves nothing until its holder has signed something with it: the server's
/// signature over the key-exchange hash, or a CA's signature over a certificate. Everything
/// here comes from untrusted peers, so every length is checked, a signature algorithm must fit
/// the key type (as OpenSSH's `sshkey_verify` requires), and any doubt answers `false`.
public enum SignatureVerifier {
    /// Verifies `signatureBlob` (`string algorithm, string signature`) over `data` with `key`.
    ///
    /// For a certificate, the certified key inside it is the one that signs (as in OpenSSH).
    public static func verify(signatureBlob: [UInt8], data: [UInt8], key: HostKey) -> Bool {
        let signer: HostKey
        if key.isCertificate {
            guard let certificate = try? HostCertificate(key) else { return false }
            signer = certificate.key
        } else {
            signer = key
        }
        var reader = SSHWireReader(signatureBlob)
        guard let algorithm = try? reader.readUTF8(limit: 64),
              let signature = try? reader.readString(limit: 8192),
              reader.isAtEnd,
              let scheme = Scheme(algorithm: algorithm, keyType: signer.kind) else { return false }
        var fields = SSHWireReader(signer.blob)
        guard (try? fields.readString(limit: 128)) != nil else { return false }
        switch scheme {
        case .ed25519:
            guard signature.count == 64, let point = try? fields.readString(limit: 64), point.count == 32 else { return false }
            return withRawEd25519(point) { verifyDigest(pkey: $0, md: nil, signature: signature, data: data) }
        case .ecdsa(let group, let md):
            guard (try? fields.readString(limit: 32)) != nil,
                  let point = try? fields.readString(limit: 256),
                  let der = ecdsaDER(signature, maxScalarBytes: 66) else { return false }
            let params: [KeyParam] = [.utf8(OSSL_PKEY_PARAM_GROUP_NAME, group), .octets(OSSL_PKEY_PARAM_PUB_KEY, point)]
            return withPublicKey(algorithm: "EC", params) { verifyDigest(pkey: $0, md: md(), signature: der, data: data) }
        case .rsa(let md):
            guard let e = try? fields.readString(limit: 2048), let n = try? fields.readString(limit: 4096) else { return false }
            let modulusBytes = n.drop { $0 == 0 }.count
            guard modulusBytes > 0, signature.count <= modulusBytes else { return false }
            let padded = [UInt8](repeating: 0, count: modulusBytes - signature.count) + signature
            let params: [KeyParam] = [.unsigned(OSSL_PKEY_PARAM_RSA_N, n), .unsigned(OSSL_PKEY_PARAM_RSA_E, e)]
            return withPublicKey(algorithm: "RSA", params) { verifyDigest(pkey: $0, md: md(), signature: padded, data: data) }
        }
    }

    /// How a signature algorithm name is checked, given the type of the key that must have made it.
    private enum Scheme {
        case ed25519
        case ecdsa(group: String, md: () -> OpaquePointer?)
        case rsa(md: () -> OpaquePointer?)

        init?(algorithm: String, keyType: KeyType) {
            switch (algorithm, keyType) {
            case ("ssh-ed25519", .ed25519): self = .ed25519
            case ("ecdsa-sha2-nistp256", .ecdsaP256): self = .ecdsa(group: "P-256", md: { Digest.fetchedSHA256 })
            case ("ecdsa-sha2-nistp384", .ecdsaP384): self = .ecdsa(group: "P-384", md: { Digest.fetchedSHA384 })
            case ("ecdsa-sha2-nistp521", .ecdsaP521): self = .ecdsa(group: "P-521", md: { Digest.fetchedSHA512 })
            case ("rsa-sha2-512", .rsa): self = .rsa(md: { Digest.fetchedSHA512 })
            case ("rsa-sha2-256", .rsa): self = .rsa(md: { Digest.fetchedSHA256 })
            case ("ssh-rsa", .rsa): self = .rsa(md: { Digest.fetchedSHA1 })
            default: return nil
            }
        }
    }

    private static func verifyDigest(pkey: OpaquePointer, md: OpaquePointer?, signature: [UInt8], data: [UInt8]) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, md, nil, pkey) == 1 else { return false }
        return signature.withUnsafeBufferPointer { sig in
            data.withUnsafeBufferPointer { message in
                EVP_DigestVerify(context, sig.baseAddress, sig.count, message.baseAddress, message.count) == 1
            }
        }
    }

    private static func withRawEd25519(_ point: [UInt8], _ body: (OpaquePointer) -> Bool) -> Bool {
        let made = point.withUnsafeBufferPointer {
            EVP_PKEY_new_raw_public_key_ex(nil, "ED25519", nil, $0.baseAddress, $0.count)
        }
        guard let pkey = made else { return false }
        defer { EVP_PKEY_free(pkey) }
        return body(pkey)
    }

    /// `EVP_PKEY_PUBLIC_KEY`, a compound macro Swift does not import.
    private static let publicKeySelection = OSSL_KEYMGMT_SELECT_DOMAIN_PARAMETERS
        | OSSL_KEYMGMT_SELECT_OTHER_PARAMETERS | OSSL_KEYMGMT_SELECT_PUBLIC_KEY

    /// One public-key field handed to `EVP_PKEY_fromdata`; `unsigned` is a big-endian magnitude.
    private enum KeyParam {
        case utf8(String, String), octets(String, [UInt8]), unsigned(String, [UInt8])
    }

    /// An `OSSL_PARAM` keeps pointers to its name and value, so both are copied into buffers
    /// that live until the key has been built.
    private static func withPublicKey(algorithm: String, _ fields: [KeyParam], _ body: (OpaquePointer) -> Bool) -> Bool {
        var buffers: [UnsafeMutableRawPointer] = []
        defer { buffers.forEach { free($0) } }
        func copy(_ bytes: [UInt8]) -> UnsafeMutableRawPointer? {
            guard let buffer = malloc(max(bytes.count, 1)) else { return nil }
            buffers.append(buffer)
            bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            return buffer
        }
        var params: [OSSL_PARAM] = []
        for field in fields {
            switch field {
            case .utf8(let name, let value):
                guard let key = copy(Array(name.utf8) + [0]), let buffer = copy(Array(value.utf8) + [0]) else { return false }
                params.append(OSSL_PARAM_construct_utf8_string(key.assumingMemoryBound(to: CChar.self),
                                                               buffer.assumingMemoryBound(to: CChar.self), value.utf8.count))
            case .octets(let name, let value):
                guard let key = copy(Array(name.utf8) + [0]), let buffer = copy(value) else { return false }
                params.append(OSSL_PARAM_construct_octet_string(key.assumingMemoryBound(to: CChar.self), buffer, value.count))
            case .unsigned(let name, let magnitude):
                let native = 1.littleEndian == 1 ? Array(magnitude.reversed()) : magnitude
                guard let key = copy(Array(name.utf8) + [0]), let buffer = copy(native) else { return false }
                params.append(OSSL_PARAM_construct_BN(key.assumingMemoryBound(to: CChar.self),
                                                      buffer.assumingMemoryBound(to: UInt8.self), native.count))
            }
        }
        params.append(OSSL_PARAM_construct_end())
        guard let context = EVP_PKEY_CTX_new_from_name(nil, algorithm, nil) else { return false }
        defer { EVP_PKEY_CTX_free(context) }
        var pkey: OpaquePointer?
        let built = params.withUnsafeMutableBufferPointer { array in
            EVP_PKEY_fromdata_init(context) == 1
                && EVP_PKEY_fromdata(context, &pkey, publicKeySelection, array.baseAddress) == 1
        }
        guard built, let made = pkey else { return false }
        defer { EVP_PKEY_free(made) }
        return body(made)
    }

    /// Converts SSH's `mpint r, mpint s` into the DER `ECDSA-Sig-Value` OpenSSL verifies.
    static func ecdsaDER(_ signature: [UInt8], maxScalarBytes: Int) -> [UInt8]? {
        var reader = SSHWireReader(signature)
        guard let r = try? reader.readString(limit: maxScalarBytes + 1),
              let s = try? reader.readString(limit: maxScalarBytes + 1),
              reader.isAtEnd, isPositiveMPInt(r), isPositiveMPInt(s) else { return nil }
        guard let sig = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(sig) }
        let rNumber = r.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
        let sNumber = s.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
        guard let rNumber, let sNumber, ECDSA_SIG_set0(sig, rNumber, sNumber) == 1 else {
            BN_free(rNumber)
            BN_free(sNumber)
            return nil
        }
        let length = i2d_ECDSA_SIG(sig, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_ECDSA_SIG(sig, &cursor)
        }
        return written == length ? der : nil
    }

    private static func isPositiveMPInt(_ bytes: [UInt8]) -> Bool {
        guard let first = bytes.first else { return false }
        return first & 0x80 == 0 && !(first == 0 && (bytes.count == 1 || bytes[1] & 0x80 == 0))
    }
}

extension HostCertificate {
    /// Whether the CA key inside the certificate really signed it.
    ///
    /// Parsing alone trusts nothing: anyone can write a certificate naming any CA.
    public var isSignatureValid: Bool {
        SignatureVerifier.verify(signatureBlob: signature, data: signedData, key: signatureKey)
    }

    /// The algorithm the CA signed with (`rsa-sha2-512`, `ssh-rsa`, ...), or nil if unreadable.
    ///
    /// OpenSSH's default `CASignatureAlgorithms` excludes `ssh-rsa` (SHA-1), so trust needs it.
    public var signatureAlgorithm: String? {
        var reader = SSHWireReader(signature)
        return try? reader.readUTF8(limit: 64)
    }
}
