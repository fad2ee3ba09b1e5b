/// The WebAuthn form of a security key's ECDSA signature (`webauthn-sk-ecdsa-sha2-nistp256@openssh.com`),
/// checked as OpenSSH 9.2's `webauthn_check_prepare_hash` checks it: a browser signs the hash of
/// its JSON clientData rather than of the data itself, so the signed data must be bound into it.
/// The clientData must begin exactly with `{"type":"webauthn.get","challenge":"<data in base64url,
/// unpadded>","origin":"<origin>"`; the origin may hold no double quote; the flags may not claim
/// attested credential data (0x40); and the extensions are present exactly when the flags say so
/// (0x80). `ssh` accepts such a signature from a host key, so the scan does too.
enum WebAuthnClientData {
    /// SHA-256 of `clientData`, which takes the signed data's place, or nil when it does not bind
    /// `challenge` and `origin` as OpenSSH requires (or the flags and extensions disagree).
    static func hash(_ clientData: [UInt8], challenge: [UInt8], origin: [UInt8], flags: UInt8, extensions: [UInt8]) -> [UInt8]? {
        // `sshbuf_get_cstring`: a NUL only at the very end, where it ends the origin.
        let origin = origin.last == 0 ? Array(origin.dropLast()) : origin
        guard !origin.contains(0), !origin.contains(UInt8(ascii: "\"")), flags & 0x40 == 0,
              (flags & 0x80 == 0) == extensions.isEmpty else { return nil }
        let preamble = Array(#"{"type":"webauthn.get","challenge":""#.utf8) + base64URL(challenge)
            + Array(#"","origin":""#.utf8) + origin + [UInt8(ascii: "\"")]
        guard clientData.count >= preamble.count, clientData.prefix(preamble.count).elementsEqual(preamble) else { return nil }
        return Digest.sha256(clientData)
    }

    /// Base64 with the URL alphabet (`-`, `_`) and no padding, as `sshbuf_dtourlb64` writes it.
    static func base64URL(_ bytes: [UInt8]) -> [UInt8] {
        Base64.encode(bytes).utf8.compactMap { character in
            switch character {
            case UInt8(ascii: "+"): UInt8(ascii: "-")
            case UInt8(ascii: "/"): UInt8(ascii: "_")
            case UInt8(ascii: "="): nil
            default: character
            }
        }
    }
}
