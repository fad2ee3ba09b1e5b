/// The fields of an OpenSSH certificate (PROTOCOL.certkeys) that trust decisions read.
///
/// Parsed from the certificate's wire blob. Whether the CA's signature over the
/// certificate is valid is a separate question answered by `SignatureVerifier`.
public struct HostCertificate: Hashable, Sendable {
    public enum Role: UInt32, Sendable { case user = 1, host = 2 }

    /// The certified key, as a plain key.
    public let key: HostKey
    public let serial: UInt64
    /// 1 = user, 2 = host; other values are kept as read so they can be reported.
    public let roleValue: UInt32
    public let keyID: String
    /// An empty list means "any principal" in OpenSSH 9.2.
    public let principals: [String]
    public let validAfter: UInt64
    public let validBefore: UInt64
    public let criticalOptions: [String]
    public let extensions: [String]
    /// The CA key that signed the certificate.
    public let signatureKey: HostKey
    /// The signature blob (algorithm name + signature) over `signedData`.
    public let signature: [UInt8]
    /// The bytes the CA signed: the whole certificate blob up to (not including) the signature.
    public let signedData: [UInt8]

    public var role: Role? { Role(rawValue: roleValue) }

    public init(_ certificate: HostKey) throws(HostKey.ParseError) {
        guard certificate.isCertificate else { throw .malformedBlob("not a certificate") }
        var reader = SSHWireReader(certificate.blob)
        _ = try KeyBlobParser.wire { try reader.readString(limit: 128) }
        _ = try KeyBlobParser.wire { try reader.readString() }
        let plain = certificate.kind.plain
        self.key = try HostKey(type: plain.name, blob: try KeyBlobParser.certifiedKey(plain, &reader))
        let tail = try HostCertificate.parseTail(&reader)
        self.serial = tail.serial
        self.roleValue = tail.role
        self.keyID = tail.keyID
        self.principals = tail.principals
        self.validAfter = tail.validAfter
        self.validBefore = tail.validBefore
        self.criticalOptions = tail.criticalOptions
        self.extensions = tail.extensions
        self.signatureKey = tail.signatureKey
        self.signature = tail.signature
        self.signedData = Array(certificate.blob[0..<tail.signatureOffset])
    }

    /// Whether `time` (seconds since the epoch) lies in `[validAfter, validBefore)`.
    public func isValid(at time: UInt64) -> Bool { validAfter <= time && time < validBefore }

    struct Tail {
        var serial: UInt64, role: UInt32, keyID: String, principals: [String]
        var validAfter: UInt64, validBefore: UInt64
        var criticalOptions: [String], extensions: [String]
        var signatureKey: HostKey, signature: [UInt8], signatureOffset: Int
    }

    /// `SSHKEY_CERT_MAX_PRINCIPALS`.
    static let maximumPrincipals = 256

    /// The fields after the certified key, with `cert_parse`'s rules: the key id and principals
    /// are C strings (a NUL inside is an error), at most 256 principals, options in pairs, a CA key
    /// OpenSSH accepts as a signing key, nothing after the signature. The role is kept as read, so
    /// that a user certificate can be reported as one. `cert_parse` bounds no field's size: only
    /// the blob (a packet of at most 256 KiB, or a file's line) does, so no field is bounded here.
    static func parseTail(_ reader: inout SSHWireReader) throws(HostKey.ParseError) -> Tail {
        let serial = try KeyBlobParser.wire { try reader.readUInt64() }
        let role = try KeyBlobParser.wire { try reader.readUInt32() }
        let keyID = try KeyBlobParser.cString(try KeyBlobParser.wire { try reader.readString() }, field: "key id").0
        let principals = try nameList(try KeyBlobParser.wire { try reader.readString() })
        let validAfter = try KeyBlobParser.wire { try reader.readUInt64() }
        let validBefore = try KeyBlobParser.wire { try reader.readUInt64() }
        let critical = try optionNames(try KeyBlobParser.wire { try reader.readString() })
        let extensions = try optionNames(try KeyBlobParser.wire { try reader.readString() })
        _ = try KeyBlobParser.wire { try reader.readString() }
        let caKey = try HostKey(signingKeyBlob: try KeyBlobParser.wire { try reader.readString() })
        let signatureOffset = reader.offset
        let signature = try KeyBlobParser.wire { try reader.readString() }
        guard reader.isAtEnd else { throw .malformedBlob("trailing bytes after certificate signature") }
        return Tail(serial: serial, role: role, keyID: keyID, principals: principals,
                    validAfter: validAfter, validBefore: validBefore,
                    criticalOptions: critical, extensions: extensions,
                    signatureKey: caKey, signature: signature, signatureOffset: signatureOffset)
    }

    private static func nameList(_ bytes: [UInt8]) throws(HostKey.ParseError) -> [String] {
        var reader = SSHWireReader(bytes)
        var names: [String] = []
        while !reader.isAtEnd {
            guard names.count < maximumPrincipals else { throw .malformedBlob("more than \(maximumPrincipals) principals") }
            names.append(try KeyBlobParser.cString(try KeyBlobParser.wire { try reader.readString() }, field: "principal").0)
        }
        return names
    }

    private static func optionNames(_ bytes: [UInt8]) throws(HostKey.ParseError) -> [String] {
        var reader = SSHWireReader(bytes)
        var names: [String] = []
        while !reader.isAtEnd {
            names.append(try KeyBlobParser.wire { try reader.readUTF8() })
            _ = try KeyBlobParser.wire { try reader.readString() }
        }
        return names
    }
}

extension KeyType {
    /// Skips the plain key's public fields in a certificate, leaving the reader at its serial
    /// (for a certificate that does not decode past them).
    public func skipPublicFields(_ reader: inout SSHWireReader) throws {
        switch plain {
        case .ed25519: _ = try reader.readString(limit: 64)
        case .skEd25519: _ = try reader.readString(limit: 64); _ = try reader.readString()
        case .ecdsaP256, .ecdsaP384, .ecdsaP521: _ = try reader.readString(limit: 32); _ = try reader.readString(limit: 256)
        case .skEcdsaP256: _ = try reader.readString(limit: 32); _ = try reader.readString(limit: 256); _ = try reader.readString()
        case .rsa: _ = try reader.readString(limit: 4096); _ = try reader.readString(limit: 4096)
        case .dsa: for _ in 0..<4 { _ = try reader.readString(limit: 4096) }
        default: break
        }
    }
}
