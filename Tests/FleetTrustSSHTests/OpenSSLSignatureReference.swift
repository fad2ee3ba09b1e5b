import COpenSSL
@testable import FleetTrustCore

/// OpenSSL 3's answer for an Ed25519 or ECDSA signature, as the scan checked them before it used
/// swift-crypto: the reference the scan's checks may never be wider than. The SSH framing rules
/// (exact lengths, minimal positive mpints, nothing trailing) are applied first, as they were then.
enum OpenSSLSignatureReference {
    /// Whether OpenSSL accepts the inner `signature` (Ed25519's 64 bytes, or ECDSA's `mpint r,
    /// mpint s`) over `data` for the plain key `key`; the digest is the one SSH pairs with its curve.
    static func accepts(signature: [UInt8], data: [UInt8], key: HostKey) -> Bool {
        var fields = SSHWireReader(key.blob)
        guard (try? fields.readString()) != nil else { return false }
        let pkey: OpaquePointer?, prepared: [UInt8]?, md: OpaquePointer?
        switch key.kind {
        case .ed25519:
            guard let point = try? fields.readString(), point.count == 32, signature.count == 64 else { return false }
            pkey = point.withUnsafeBufferPointer { EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, $0.baseAddress, 32) }
            (prepared, md) = (signature, nil)
        case .ecdsaP256, .ecdsaP384, .ecdsaP521:
            guard (try? fields.readString()) != nil, let point = try? fields.readString() else { return false }
            let curve: OpenSSLKeys.ECCurveName = key.kind == .ecdsaP256 ? .p256 : key.kind == .ecdsaP384 ? .p384 : .p521
            pkey = point.withUnsafeBytes { OpenSSLKeys.ecPublicKey(curve, point: $0) }
            prepared = der(signature)
            md = key.kind == .ecdsaP256 ? Digest.fetchedSHA256 : key.kind == .ecdsaP384 ? Digest.fetchedSHA384 : Digest.fetchedSHA512
        default:
            return false
        }
        guard let pkey else { return false }
        defer { EVP_PKEY_free(pkey) }
        guard let prepared, let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, md, nil, pkey) == 1 else { return false }
        return EVP_DigestVerify(context, prepared, prepared.count, data, data.count) == 1
    }

    /// SSH's `mpint r, mpint s` as the DER `ECDSA-Sig-Value` OpenSSL verifies; nil for trailing
    /// bytes or a scalar that is not a minimal positive mpint.
    static func der(_ signature: [UInt8]) -> [UInt8]? {
        var reader = SSHWireReader(signature)
        guard let r = try? reader.readString(limit: 67), let s = try? reader.readString(limit: 67),
              reader.isAtEnd, [r, s].allSatisfy(isPositiveMPInt), let sig = ECDSA_SIG_new() else { return nil }
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
