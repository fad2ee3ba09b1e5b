/// Reads a public key blob exactly as OpenSSH 9.2's `sshkey_from_blob` does, and yields the
/// blob OpenSSH would write for the key it read.
///
/// OpenSSH never compares or fingerprints bytes as received: it parses the key (an `mpint` with
/// extra leading zero bytes is the same number, a type name may end in one NUL byte, `RSA` names
/// an `ssh-rsa` key) and works on the re-encoded key. Whoever compares bytes as received can be
/// told a revoked key is new. So every key becomes its canonical encoding here, once, and
/// everything after compares that. A blob already canonical (the usual case) is kept as it is,
/// without a copy. Certificates are the exception, as in OpenSSH: they are compared as the bytes
/// the CA signed, and only the key they certify is re-encoded.
enum KeyBlobParser {
    /// `SSHBUF_MAX_BIGNUM`: 16384 bits.
    static let maximumIntegerBytes = 16384 / 8
    /// `SSH_RSA_MINIMUM_MODULUS_SIZE`.
    static let minimumRSABits = 1024

    /// What a blob holds.
    struct Parsed {
        let kind: KeyType
        /// The canonical blob (the input itself when it was canonical, and for certificates).
        let blob: [UInt8]
    }

    /// Parses `blob`; `allowCertificate: false` is the rule for a certificate's CA key.
    static func parse(_ blob: [UInt8], allowCertificate: Bool = true) throws(HostKey.ParseError) -> Parsed {
        var reader = SSHWireReader(blob)
        let (kind, nameIsCanonical) = try readTypeName(&reader)
        var none: SSHWireWriter?
        if kind.isCertificate {
            guard allowCertificate else { throw .invalidSigningKey("it is a certificate") }
            _ = try wire { try reader.readString() }
            try readPublicFields(kind.plain, &reader, into: &none, refusingShortRSA: true)
            _ = try HostCertificate.parseTail(&reader)
            return Parsed(kind: kind, blob: blob)
        }
        let fieldsStart = reader.offset
        let fieldsCanonical = try readPublicFields(kind, &reader, into: &none, refusingShortRSA: !allowCertificate)
        guard reader.isAtEnd else { throw .trailingBytes }
        if nameIsCanonical && fieldsCanonical { return Parsed(kind: kind, blob: blob) }
        var fields = SSHWireReader(blob)
        _ = try wire { try fields.readBytes(fieldsStart) }
        var writer: SSHWireWriter? = SSHWireWriter()
        writer?.writeString(kind.name)
        try readPublicFields(kind, &fields, into: &writer, refusingShortRSA: false)
        return Parsed(kind: kind, blob: writer?.bytes ?? blob)
    }

    /// The plain key a certificate certifies, re-encoded; the reader stands after the nonce and is
    /// left at the serial.
    static func certifiedKey(_ plain: KeyType, _ reader: inout SSHWireReader) throws(HostKey.ParseError) -> [UInt8] {
        var writer: SSHWireWriter? = SSHWireWriter()
        writer?.writeString(plain.name)
        try readPublicFields(plain, &reader, into: &writer, refusingShortRSA: true)
        return writer?.bytes ?? []
    }

    /// The key type string: a C string (`sshbuf_get_cstring`), named as `sshkey_type_from_name`
    /// reads it (the full name, or for plain keys the short name in any case: `RSA`, `ed25519`).
    private static func readTypeName(_ reader: inout SSHWireReader) throws(HostKey.ParseError) -> (KeyType, Bool) {
        let raw = try wire { try reader.readString(limit: 128) }
        let ended = raw.last == 0
        let name = ended ? raw.dropLast() : raw[...]
        if !name.contains(0), let known = typeNames.first(where: { $0.bytes.count == name.count && $0.bytes.elementsEqual(name) }) {
            return (known.kind, !ended && known.canonical)
        }
        let (text, exact) = try cString(raw, field: "key type")
        if let kind = KeyType(name: KeyType.canonicalName(text)) {
            return (kind, exact && kind.name == text)
        }
        switch text.lowercased() {
        case "rsa": return (.rsa, false)
        case "dsa": return (.dsa, false)
        case "ed25519": return (.ed25519, false)
        default: throw .unknownType(text)
        }
    }

    /// Every key type's name and every RSA signature name as bytes, with the type it reads as and
    /// whether it is that type's own name: the names servers send are matched without first being
    /// made into a string (the name look-ups were half of a host key's parsing). Any other name
    /// takes `readTypeName`'s reading by text, which gives the same answer for these.
    private static let typeNames: [(bytes: [UInt8], kind: KeyType, canonical: Bool)] =
        KeyType.allCases.map { (Array($0.name.utf8), $0, true) }
            + KeyType.rsaSignatureNames.compactMap { name, key in KeyType(name: key).map { (Array(name.utf8), $0, false) } }

    /// Reads the public fields of a plain key type (`*_deserialize_public`), optionally writing
    /// their canonical encoding; answers whether they were canonical already. `refusingShortRSA`
    /// applies `sshkey_check_rsa_length`, which OpenSSH runs on every RSA key it parses; plain keys
    /// are let through here so that a short key can be reported as such (ssh refuses it anyway).
    @discardableResult
    private static func readPublicFields(_ kind: KeyType, _ reader: inout SSHWireReader, into writer: inout SSHWireWriter?,
                                         refusingShortRSA: Bool) throws(HostKey.ParseError) -> Bool {
        switch kind.plain {
        case .ed25519, .skEd25519:
            let point = try wire { try reader.readString(limit: 64) }
            guard point.count == 32 else { throw .malformedBlob("ed25519 key is not 32 bytes") }
            writer?.writeString(point)
            return try kind.plain == .skEd25519 ? application(&reader, into: &writer) : true
        case .ecdsaP256, .ecdsaP384, .ecdsaP521, .skEcdsaP256:
            let (name, exact) = try cString(try wire { try reader.readString(limit: 64) }, field: "curve name")
            guard name == kind.curveName, let ec = curve(kind) else { throw .curveMismatch(Sanitizer.clean(name, limit: 32)) }
            let point = try wire { try reader.readString(limit: ECPublicPoint.maximumLength) }
            do {
                try ECPublicPoint.validate(point, curve: ec)
            } catch {
                throw .invalidECPoint
            }
            writer?.writeString(name)
            writer?.writeString(point)
            let applicationExact = try kind.plain == .skEcdsaP256 ? application(&reader, into: &writer) : true
            return exact && applicationExact
        case .rsa:
            let eCanonical = try integer(&reader, into: &writer)
            let (nCanonical, bits) = try integerBits(&reader, into: &writer)
            if refusingShortRSA, bits < minimumRSABits { throw .rsaKeyTooShort(bits: bits) }
            return eCanonical && nCanonical
        case .dsa:
            var canonical = true
            for _ in 0..<4 where !(try integer(&reader, into: &writer)) { canonical = false }
            return canonical
        default:
            throw .unknownType(kind.name)
        }
    }

    /// A security key's application (`sshbuf_get_cstring` in `sshkey_deserialize_sk`): a C string,
    /// usually `ssh:`; the signature covers its SHA-256.
    private static func application(_ reader: inout SSHWireReader, into writer: inout SSHWireWriter?) throws(HostKey.ParseError) -> Bool {
        let raw = try wire { try reader.readString() }
        let exact = try cString(raw, field: "application").1
        writer?.writeString(exact ? raw : Array(raw.dropLast()))
        return exact
    }

    private static func integer(_ reader: inout SSHWireReader,
                                into writer: inout SSHWireWriter?) throws(HostKey.ParseError) -> Bool {
        try integerBits(&reader, into: &writer).0
    }

    /// An `mpint` as `sshbuf_get_bignum2_bytes_direct` reads it: never negative, at most
    /// `SSHBUF_MAX_BIGNUM` bytes (one more for a leading zero), leading zero bytes dropped.
    private static func integerBits(_ reader: inout SSHWireReader,
                                    into writer: inout SSHWireWriter?) throws(HostKey.ParseError) -> (Bool, Int) {
        let raw = try wire { try reader.readString() }
        if let first = raw.first, first & 0x80 != 0 { throw .negativeInteger }
        if raw.count > maximumIntegerBytes + 1 || (raw.count == maximumIntegerBytes + 1 && raw[0] != 0) { throw .integerTooLarge }
        let magnitude = raw.drop { $0 == 0 }
        writer?.writeMPInt(unsigned: Array(magnitude))
        let bits = magnitude.first.map { (magnitude.count - 1) * 8 + (8 - $0.leadingZeroBitCount) } ?? 0
        let canonical = raw.first != 0 || (raw.count >= 2 && raw[1] & 0x80 != 0)
        return (raw.isEmpty || canonical, bits)
    }

    private static func curve(_ kind: KeyType) -> ECPublicPoint.Curve? {
        switch kind.plain {
        case .ecdsaP256, .skEcdsaP256: return .p256
        case .ecdsaP384: return .p384
        case .ecdsaP521: return .p521
        default: return nil
        }
    }

    /// `sshbuf_get_cstring`: one NUL is allowed only as the last byte (and dropped); answers the
    /// text and whether it had none.
    static func cString(_ raw: [UInt8], field: String) throws(HostKey.ParseError) -> (String, Bool) {
        guard let nul = raw.firstIndex(of: 0) else { return (String(decoding: raw, as: UTF8.self), true) }
        guard nul == raw.count - 1 else { throw .embeddedNUL(field) }
        return (String(decoding: raw.dropLast(), as: UTF8.self), false)
    }

    /// Runs a wire read, turning running out of bytes into a typed parse error.
    static func wire<T>(_ read: () throws -> T) throws(HostKey.ParseError) -> T {
        do {
            return try read()
        } catch SSHWireReader.Failure.oversized {
            throw .malformedBlob("a field is longer than OpenSSH allows")
        } catch {
            throw .malformedBlob("truncated")
        }
    }
}
