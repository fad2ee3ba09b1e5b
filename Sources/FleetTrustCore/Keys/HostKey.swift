/// A public host key (or host certificate) as SSH transmits it: its type name and wire blob.
///
/// This is the one value that flows from a probe to the trust engine, the stores and the
/// screen. Construction validates the blob against the named type (as OpenSSH's
/// `sshkey_read` does), so a `HostKey` is always a key OpenSSH would also accept.
public struct HostKey: Hashable, Sendable {
    /// The key type name, for example `ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`,
    /// or `ssh-ed25519-cert-v01@openssh.com`.
    public let type: String
    /// The SSH wire encoding of the public key (the base64-decoded middle field of a key line).
    public let blob: [UInt8]

    public enum ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        case unknownType(String)
        case badBase64
        case typeMismatch(named: String, encoded: String)
        case malformedBlob(String)
        case missingFields

        public var description: String {
            switch self {
            case .unknownType(let t): return "unknown key type \(Sanitizer.clean(t, limit: 64))"
            case .badBase64: return "key data is not valid base64"
            case .typeMismatch(let named, let encoded):
                return "key is named \(Sanitizer.clean(named, limit: 64)) but encodes \(Sanitizer.clean(encoded, limit: 64))"
            case .malformedBlob(let why): return "malformed key data: \(why)"
            case .missingFields: return "expected a key type and base64 key data"
            }
        }
    }

    /// Builds a key from its wire blob, taking the type from the blob itself.
    public init(blob: [UInt8]) throws {
        var reader = SSHWireReader(blob)
        guard let encoded = try? reader.readUTF8(limit: 128) else { throw ParseError.malformedBlob("no type") }
        try self.init(type: encoded, blob: blob)
    }

    /// Builds a key from a type name and blob; `rsa-sha2-256`/`rsa-sha2-512` name RSA keys too.
    public init(type named: String, blob: [UInt8]) throws {
        let canonical = KeyType.canonicalName(named)
        guard let kind = KeyType(name: canonical) else { throw ParseError.unknownType(named) }
        var reader = SSHWireReader(blob)
        guard let encoded = try? reader.readUTF8(limit: 128) else { throw ParseError.malformedBlob("no type") }
        guard encoded == canonical else { throw ParseError.typeMismatch(named: named, encoded: encoded) }
        do {
            try kind.validate(&reader)
        } catch let error as ParseError {
            throw error
        } catch {
            throw ParseError.malformedBlob("truncated")
        }
        self.type = canonical
        self.blob = blob
    }

    /// Parses `type base64 [comment]` (an OpenSSH public-key line or a `.pub` file's content).
    public init(openSSHLine line: Substring) throws {
        let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" })
        guard fields.count >= 2 else { throw ParseError.missingFields }
        guard let blob = Base64.decode(fields[1]) else { throw ParseError.badBase64 }
        try self.init(type: String(fields[0]), blob: blob)
    }

    public init(openSSHLine line: String) throws { try self.init(openSSHLine: Substring(line)) }

    public var kind: KeyType { KeyType(name: type)! }
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
    public var sha256Fingerprint: String { "SHA256:" + Base64.encode(Digest.sha256(fingerprintedBlob), padded: false) }
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
