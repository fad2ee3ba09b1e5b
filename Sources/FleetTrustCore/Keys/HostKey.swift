/// A public host key (or host certificate): its type name and canonical wire blob.
///
/// This is the one value that flows from a probe to the trust engine, the stores and the
/// screen. Construction parses the blob with OpenSSH's rules (`sshkey_from_blob`) and keeps the
/// encoding OpenSSH would write for the key it read, so equality, fingerprints, pins and history
/// all see the key `ssh` sees, however it was encoded on the wire or in a file: an RSA modulus
/// with an extra leading zero byte is the same key. A certificate keeps its bytes as the CA
/// signed them (OpenSSH compares certificates that way); the key it certifies is canonical.
public struct HostKey: Hashable, Sendable {
    /// The key type, parsed once from the blob.
    public let kind: KeyType
    /// The canonical SSH wire encoding of the public key (for a certificate: its blob as signed).
    public let blob: [UInt8]

    /// Why OpenSSH would not read a blob or a key line as a key.
    public enum ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        case unknownType(String)
        case badBase64
        case typeMismatch(named: String, encoded: String)
        case malformedBlob(String)
        case missingFields
        /// An integer with its top bit set (`SSH_ERR_BIGNUM_IS_NEGATIVE`).
        case negativeInteger
        /// An integer over 16384 bits (`SSH_ERR_BIGNUM_TOO_LARGE`).
        case integerTooLarge
        /// An ECDSA key whose curve name is not its type's.
        case curveMismatch(String)
        /// An ECDSA point not on its curve, or degenerate (`sshkey_ec_validate_public`).
        case invalidECPoint
        /// A NUL byte inside a string OpenSSH reads as a C string (key type, curve, key id, principal).
        case embeddedNUL(String)
        case trailingBytes
        /// An RSA key under 1024 bits where OpenSSH refuses it (`sshkey_check_rsa_length`).
        case rsaKeyTooShort(bits: Int)
        /// A certificate's CA key that OpenSSH refuses ("invalid certificate signing key").
        case invalidSigningKey(String)

        public var description: String {
            switch self {
            case .unknownType(let t): return "unknown key type \(Sanitizer.clean(t, limit: 64))"
            case .badBase64: return "key data is not valid base64"
            case .typeMismatch(let named, let encoded):
                return "key is named \(Sanitizer.clean(named, limit: 64)) but encodes \(Sanitizer.clean(encoded, limit: 64))"
            case .malformedBlob(let why): return "malformed key data: \(why)"
            case .missingFields: return "expected a key type and base64 key data"
            case .negativeInteger: return "malformed key data: a negative integer"
            case .integerTooLarge: return "malformed key data: an integer over 16384 bits"
            case .curveMismatch(let curve): return "malformed key data: curve \(Sanitizer.clean(curve, limit: 32)) does not match the key type"
            case .invalidECPoint: return "malformed key data: the EC point is not a valid point of its curve"
            case .embeddedNUL(let field): return "malformed key data: the \(field) contains a NUL byte"
            case .trailingBytes: return "malformed key data: trailing bytes"
            case .rsaKeyTooShort(let bits): return "RSA key of \(bits) bits is below the minimum of \(KeyBlobParser.minimumRSABits)"
            case .invalidSigningKey(let why): return "invalid certificate signing key: \(why)"
            }
        }
    }

    /// Builds a key from its wire blob, taking the type from the blob itself (a server's K_S).
    public init(blob: [UInt8]) throws(ParseError) {
        let parsed = try KeyBlobParser.parse(blob)
        self.kind = parsed.kind
        self.blob = parsed.blob
    }

    /// Builds a key from a type name and blob, as `sshkey_read` does for a key line: the blob must
    /// encode that very type; `rsa-sha2-256`/`rsa-sha2-512` name RSA keys too.
    public init(type named: String, blob: [UInt8]) throws(ParseError) {
        guard let kind = KeyType(name: KeyType.canonicalName(named)) else { throw .unknownType(named) }
        let parsed = try KeyBlobParser.parse(blob)
        guard parsed.kind == kind else { throw .typeMismatch(named: named, encoded: parsed.kind.name) }
        self.kind = parsed.kind
        self.blob = parsed.blob
    }

    /// A certificate's CA key: certificates cannot sign, RSA under 1024 bits is refused.
    init(signingKeyBlob blob: [UInt8]) throws(ParseError) {
        do {
            let parsed = try KeyBlobParser.parse(blob, allowCertificate: false)
            self.kind = parsed.kind
            self.blob = parsed.blob
        } catch {
            if case .invalidSigningKey = error { throw error }
            throw .invalidSigningKey(error.description)
        }
    }

    /// Parses `type base64 [comment]` (an OpenSSH public-key line or a `.pub` file's content).
    public init(openSSHLine line: Substring) throws {
        let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" })
        guard fields.count >= 2 else { throw ParseError.missingFields }
        guard let blob = Base64.decode(fields[1]) else { throw ParseError.badBase64 }
        try self.init(type: String(fields[0]), blob: blob)
    }

    public init(openSSHLine line: String) throws { try self.init(openSSHLine: Substring(line)) }

    /// The key type name, for example `ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`,
    /// or `ssh-ed25519-cert-v01@openssh.com`.
    public var type: String { kind.name }
    public var isCertificate: Bool { kind.isCertificate }

    /// The base64 of the blob, as the second field of a key line.
    public var base64: String { Base64.encode(blob) }
    /// `type base64`, as OpenSSH writes it in `known_hosts` and `.pub` files.
    public var openSSHLine: String { "\(type) \(base64)" }

    /// The blob OpenSSH fingerprints: a certificate is fingerprinted by the key it certifies.
    public var fingerprintedBlob: [UInt8] {
        guard isCertificate, let certificate = try? HostCertificate(self) else { return blob }
        return certificate.key.blob
    }

    /// `SHA256:` + unpadded base64, exactly as `ssh-keygen -lf` prints it (for a certificate,
    /// that of the certified key, as ssh-keygen does).
    public var fingerprint: SHA256Fingerprint { SHA256Fingerprint(of: fingerprintedBlob) }
    /// The fingerprint's text, for the edge (JSON, screens, files).
    public var sha256Fingerprint: String { fingerprint.description }
    /// `MD5:aa:bb:...`, as `ssh-keygen -E md5 -lf` prints it.
    public var md5Fingerprint: String {
        "MD5:" + Digest.md5(fingerprintedBlob).map { byte in
            let hex = String(byte, radix: 16)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: ":")
    }

    /// The key size in bits as `ssh-keygen -l` reports it (RSA modulus, ECDSA curve, 256 for Ed25519).
    public var bits: Int { kind.bits(blob: blob) }
}
