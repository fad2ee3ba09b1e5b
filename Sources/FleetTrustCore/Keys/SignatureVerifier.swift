/// Checks SSH signatures (RFC 4253 §6.6, RFC 5656, RFC 8332, RFC 8709): Ed25519 and ECDSA with
/// swift-crypto, RSA with OpenSSL (`VerificationKey` says why).
///
/// A host key proves nothing until its holder has signed something with it: the server's
/// signature over the key-exchange hash, or a CA's signature over a certificate. Everything
/// here comes from untrusted peers, so every length is checked, a signature algorithm must fit
/// the key type (as OpenSSH's `sshkey_verify` requires), and any doubt answers `false`.
/// The library's key for a host key is built once and kept by its exact blob (`VerificationKeyCache`).
public enum SignatureVerifier {
    /// Verifies `signatureBlob` (`string algorithm, string signature`) over `data` with `key`.
    ///
    /// For a certificate, the certified key inside it is the one that signs (as in OpenSSH).
    public static func verify(signatureBlob: [UInt8], data: [UInt8], key: HostKey) -> Bool {
        guard let signer = VerificationKeyCache.shared.key(for: key) else { return false }
        var reader = SSHWireReader(signatureBlob)
        guard let algorithm = try? reader.readCString(limit: 65),
              let signature = try? reader.readString(limit: 8192),
              let scheme = Scheme(algorithm: algorithm, keyType: signer.kind) else { return false }
        switch scheme {
        case .ed25519:
            guard reader.isAtEnd, let signature = ed25519AsOpenSSHReadsIt(signature) else { return false }
            return signer.verify(signature: signature, md: nil, data: data)
        case .ecdsa:
            guard reader.isAtEnd, let raw = ecdsaRaw(signature, scalarBytes: signer.ecdsaScalarBytes) else { return false }
            return signer.verify(signature: raw, md: nil, data: data)
        case .securityKey(let ecdsa, let webauthn):
            // ssh-ed25519-sk.c, ssh-ecdsa-sk.c: the token signed SHA-256(application) || flags ||
            // counter || SHA-256(data); for a host key `ssh` checks neither flag (no user presence).
            // A WebAuthn signature signed extensions || SHA-256(clientData) in that last place.
            guard let flags = try? reader.readByte(), let counter = try? reader.readUInt32() else { return false }
            var extensions: [UInt8] = []
            var messageHash: [UInt8]
            if webauthn {
                // No bounds of their own in `ssh`: the packet's (256 KiB) bounds them.
                guard let origin = try? reader.readString(limit: 1 << 18), let clientData = try? reader.readString(limit: 1 << 18),
                      let named = try? reader.readString(limit: 1 << 18), reader.isAtEnd,
                      let hash = WebAuthnClientData.hash(clientData, challenge: data, origin: origin, flags: flags, extensions: named)
                else { return false }
                extensions = named
                messageHash = hash
            } else {
                guard reader.isAtEnd else { return false }
                messageHash = Digest.sha256(data)
            }
            var signed = SSHWireWriter(capacity: 69 + extensions.count)
            signed.writeRaw(signer.applicationHash)
            signed.writeByte(flags)
            signed.writeUInt32(counter)
            signed.writeRaw(extensions)
            signed.writeRaw(messageHash)
            if ecdsa {
                guard let raw = ecdsaRaw(signature, scalarBytes: signer.ecdsaScalarBytes) else { return false }
                return signer.verify(signature: raw, md: nil, data: signed.bytes)
            }
            guard let signature = ed25519AsOpenSSHReadsIt(signature) else { return false }
            return signer.verify(signature: signature, md: nil, data: signed.bytes)
        case .rsa(let md):
            guard reader.isAtEnd, signature.count <= signer.modulusBytes else { return false }
            let padded = signature.count == signer.modulusBytes
                ? signature : [UInt8](repeating: 0, count: signer.modulusBytes - signature.count) + signature
            return signer.verify(signature: padded, md: md(), data: data)
        }
    }

    /// How a signature algorithm name is checked, given the type of the key that must have made it.
    private enum Scheme {
        case ed25519
        /// ECDSA over the key's curve, with the digest SSH pairs with that curve.
        case ecdsa
        case rsa(md: () -> OpaquePointer?)
        /// A FIDO security key's signature, ECDSA P-256 or Ed25519; `webauthn`: made through a web
        /// browser's WebAuthn (P-256 only), which `ssh` accepts from a host key too.
        case securityKey(ecdsa: Bool, webauthn: Bool)

        init?(algorithm: String, keyType: KeyType) {
            switch (algorithm, keyType) {
            case ("ssh-ed25519", .ed25519): self = .ed25519
            case ("sk-ssh-ed25519@openssh.com", .skEd25519): self = .securityKey(ecdsa: false, webauthn: false)
            case ("sk-ecdsa-sha2-nistp256@openssh.com", .skEcdsaP256): self = .securityKey(ecdsa: true, webauthn: false)
            case ("webauthn-sk-ecdsa-sha2-nistp256@openssh.com", .skEcdsaP256): self = .securityKey(ecdsa: true, webauthn: true)
            case ("ecdsa-sha2-nistp256", .ecdsaP256): self = .ecdsa
            case ("ecdsa-sha2-nistp384", .ecdsaP384): self = .ecdsa
            case ("ecdsa-sha2-nistp521", .ecdsaP521): self = .ecdsa
            case ("rsa-sha2-512", .rsa): self = .rsa(md: { Digest.fetchedSHA512 })
            case ("rsa-sha2-256", .rsa): self = .rsa(md: { Digest.fetchedSHA256 })
            case ("ssh-rsa", .rsa): self = .rsa(md: { Digest.fetchedSHA1 })
            default: return nil
            }
        }
    }

    /// L, the order of Ed25519's base point, little-endian (RFC 8032 §5.1).
    private static let ed25519Order: [UInt8] = [0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14]
        + [UInt8](repeating: 0, count: 15) + [0x10]

    /// An Ed25519 signature R || S as `ssh` reads it (OpenSSH's ref10 `crypto_sign_ed25519_open`):
    /// refused when any of S's top three bits is set, otherwise S is taken modulo L, so S + L
    /// verifies as S does. RFC 8032 and swift-crypto refuse every S at or above L; checking the
    /// reduced S gives `ssh`'s answer, since [S]B = [S mod L]B. S < 2^253 < 2L, so S mod L is S
    /// or S - L. Nil for another length or a set top bit.
    static func ed25519AsOpenSSHReadsIt(_ signature: [UInt8]) -> [UInt8]? {
        guard signature.count == 64, signature[63] & 0xe0 == 0 else { return nil }
        let scalar = signature[32...]
        // S >= L, compared from the most significant byte.
        var atOrAbove = true
        for index in stride(from: 31, through: 0, by: -1) where scalar[32 + index] != ed25519Order[index] {
            atOrAbove = scalar[32 + index] > ed25519Order[index]
            break
        }
        guard atOrAbove else { return signature }
        var reduced = Array(signature.prefix(32))
        var borrow = 0
        for index in 0..<32 {
            let difference = Int(scalar[32 + index]) - Int(ed25519Order[index]) - borrow
            reduced.append(UInt8(truncatingIfNeeded: difference))
            borrow = difference < 0 ? 1 : 0
        }
        return reduced
    }

    /// Converts SSH's `mpint r, mpint s` into the raw r || s, each left-padded to `scalarBytes`,
    /// reading each mpint as `ssh` does (`sshbuf_get_bignum2`): a negative one (top bit set) is
    /// refused, leading zero bytes are skipped however many there are, and one over OpenSSH's
    /// bignum limit is refused. Nil for trailing bytes, or a scalar longer than the curve's order
    /// (which no valid scalar is); zero and values at or above the order are the verifier's to refuse.
    static func ecdsaRaw(_ signature: [UInt8], scalarBytes: Int) -> [UInt8]? {
        var reader = SSHWireReader(signature)
        guard scalarBytes > 0, let r = try? reader.readString(limit: maximumMPIntBytes),
              let s = try? reader.readString(limit: maximumMPIntBytes), reader.isAtEnd else { return nil }
        var raw: [UInt8] = []
        raw.reserveCapacity(2 * scalarBytes)
        for scalar in [r, s] {
            guard scalar.first.map({ $0 & 0x80 == 0 }) ?? true,
                  scalar.count < maximumMPIntBytes || scalar.first == 0 else { return nil }
            let magnitude = scalar.drop { $0 == 0 }
            guard magnitude.count <= scalarBytes else { return nil }
            raw.append(contentsOf: repeatElement(0, count: scalarBytes - magnitude.count))
            raw.append(contentsOf: magnitude)
        }
        return raw
    }

    /// OpenSSH's `SSHBUF_MAX_BIGNUM` (2048 bytes) and a zero byte for the sign.
    private static let maximumMPIntBytes = 2049
}

extension HostCertificate {
    /// Whether the CA key inside the certificate really signed it.
    ///
    /// Parsing alone trusts nothing: anyone can write a certificate naming any CA.
    public var isSignatureValid: Bool {
        SignatureVerifier.verify(signatureBlob: signature, data: signedData, key: signatureKey)
    }

    /// The algorithm the CA signed with (`rsa-sha2-512`, `ssh-rsa`, ...), read as `ssh` reads it
    /// (a NUL at its very end ends it), or nil if unreadable.
    ///
    /// OpenSSH's default `CASignatureAlgorithms` excludes `ssh-rsa` (SHA-1), so trust needs it.
    public var signatureAlgorithm: String? {
        var reader = SSHWireReader(signature)
        return try? reader.readCString(limit: 65)
    }
}
