import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Key and certificate files for fake servers, made with the real tools.
public enum KeyFiles {
    /// The blob (base64-decoded second field) of an OpenSSH public key or certificate file.
    public static func blob(publicKeyFile path: String) throws -> [UInt8] {
        let fields = try String(contentsOfFile: path, encoding: .utf8).split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count >= 2, let data = Data(base64Encoded: String(fields[1])) else {
            throw TestFleetError.toolFailed("\(path): not an OpenSSH public key file")
        }
        return [UInt8](data)
    }

    /// The `type base64` text of an OpenSSH public key or certificate file (no comment).
    public static func line(publicKeyFile path: String) throws -> String {
        let fields = try String(contentsOfFile: path, encoding: .utf8).split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count >= 2 else { throw TestFleetError.toolFailed("\(path): not an OpenSSH public key file") }
        return "\(fields[0]) \(fields[1])"
    }

    /// `type base64` for a blob.
    public static func line(blob: [UInt8]) -> String {
        var reader = CertificateReader(blob)
        let type = (try? reader.string()).map { String(decoding: $0, as: UTF8.self) } ?? "unknown"
        return "\(type) \(Data(blob).base64EncodedString())"
    }

    /// A security-key public key file (`sk-ssh-ed25519@openssh.com` or `sk-ecdsa-sha2-nistp256@openssh.com`)
    /// at `output`, for the Ed25519 or P-256 key pair at `privateKeyPath`: its public fields and
    /// `application`. `ssh-keygen -t ed25519-sk` needs a token; a fake server signs as one with the pair.
    @discardableResult
    public static func securityKey(privateKeyPath: String, application: String = "ssh:", output: String) throws -> String {
        var reader = CertificateReader(try blob(publicKeyFile: privateKeyPath + ".pub"))
        let type = String(decoding: try reader.string(), as: UTF8.self)
        var fields: [[UInt8]]
        switch type {
        case "ssh-ed25519": fields = [Array("sk-ssh-ed25519@openssh.com".utf8), try reader.string()]
        case "ecdsa-sha2-nistp256": fields = [Array("sk-ecdsa-sha2-nistp256@openssh.com".utf8), try reader.string(), try reader.string()]
        default: throw TestFleetError.toolFailed("\(privateKeyPath): no security-key type for \(type)")
        }
        var bytes: [UInt8] = []
        for field in fields + [Array(application.utf8)] { OddCertificates.appendString(field, to: &bytes) }
        try "\(line(blob: bytes)) fake-security-key\n".write(toFile: output, atomically: true, encoding: .utf8)
        return output
    }

    /// Makes a key pair at `path` and `path.pub` with ssh-keygen (`type`: ed25519, ecdsa, rsa, dsa).
    /// RSA keys under 1024 bits, which ssh-keygen refuses, are made with `openssl genrsa` and
    /// converted by Python's `cryptography` into OpenSSH files.
    public static func generate(type: String, bits: Int? = nil, path: String) throws {
        try? FileManager.default.removeItem(atPath: path)
        try? FileManager.default.removeItem(atPath: path + ".pub")
        if type == "rsa", let bits, bits < 1024 {
            try Tool.check("/usr/bin/openssl", ["genrsa", "-out", path + ".pem", String(bits)])
            defer { try? FileManager.default.removeItem(atPath: path + ".pem") }
            try Tool.check("/usr/bin/python3", ["-c", """
                import sys
                from cryptography.hazmat.primitives import serialization as S
                k = S.load_pem_private_key(open(sys.argv[1], "rb").read(), None)
                open(sys.argv[2], "wb").write(k.private_bytes(S.Encoding.PEM, S.PrivateFormat.OpenSSH, S.NoEncryption()))
                open(sys.argv[2] + ".pub", "wb").write(k.public_key().public_bytes(S.Encoding.OpenSSH, S.PublicFormat.OpenSSH) + b"\\n")
                """, path + ".pem", path])
            return
        }
        try Tool.check("/usr/bin/ssh-keygen", ["-q", "-t", type, "-N", "", "-C", "", "-f", path] + (bits.map { ["-b", String($0)] } ?? []))
    }

    /// Signs `publicKeyPath` with the CA `caPath` (`ssh-keygen -s`) and returns the certificate's path.
    /// - Parameters:
    ///   - host: a host certificate (`-h`); false makes a user certificate.
    ///   - principals: `-n`; nil or empty signs none (valid for any name, in 9.2).
    ///   - validity: `-V`, e.g. `20200101:20210101`.
    ///   - signatureAlgorithm: `-t`, e.g. `ssh-rsa` for a SHA-1 CA signature by an RSA CA.
    ///   - output: where the certificate goes (a copy of the public key is signed there).
    @discardableResult
    public static func certify(publicKeyPath: String, caPath: String, identity: String, host: Bool = true,
                               principals: [String]? = nil, validity: String? = nil, signatureAlgorithm: String? = nil,
                               output: String) throws -> String {
        precondition(output.hasSuffix("-cert.pub"), "ssh-keygen names its output KEY-cert.pub")
        let base = String(output.dropLast("-cert.pub".count))
        try? FileManager.default.removeItem(atPath: base + ".pub")
        try? FileManager.default.removeItem(atPath: output)
        try FileManager.default.copyItem(atPath: publicKeyPath, toPath: base + ".pub")
        var arguments = ["-q", "-s", caPath, "-I", identity]
        if host { arguments.append("-h") }
        if let principals, !principals.isEmpty { arguments += ["-n", principals.joined(separator: ",")] }
        if let validity { arguments += ["-V", validity] }
        if let signatureAlgorithm { arguments += ["-t", signatureAlgorithm] }
        try Tool.check("/usr/bin/ssh-keygen", arguments + [base + ".pub"])
        return output
    }
}

/// Odd certificates made from real ones (`ssh-keygen -s`), for what a stock sshd will not serve.
public enum OddCertificates {
    /// A certificate blob cut in two: everything before the CA signature, and the signature field.
    public struct Parts: Sendable {
        /// The blob up to the signature field (the key type, nonce, certified key, ..., CA key).
        public var signed: [UInt8]
        /// The CA signature's algorithm name, e.g. `rsa-sha2-512`.
        public var signatureAlgorithm: String
        /// The raw signature bytes inside the signature blob.
        public var signature: [UInt8]
    }

    /// Splits an OpenSSH certificate blob (PROTOCOL.certkeys).
    public static func parts(_ blob: [UInt8]) throws -> Parts {
        var reader = CertificateReader(blob)
        let type = String(decoding: try reader.string(), as: UTF8.self)
        guard type.hasSuffix("-cert-v01@openssh.com") else { throw TestFleetError.toolFailed("not a certificate: \(type)") }
        _ = try reader.string()                                     // nonce
        let keyFields: Int
        switch type {
        case "ssh-ed25519-cert-v01@openssh.com": keyFields = 1       // pk
        case "ssh-dss-cert-v01@openssh.com": keyFields = 4           // p q g y
        case "ssh-rsa-cert-v01@openssh.com": keyFields = 2           // e n
        default: keyFields = type.hasPrefix("ecdsa-") ? 2 : 1       // curve Q
        }
        for _ in 0..<keyFields { _ = try reader.string() }
        try reader.skip(8 + 4)                                      // serial, type
        _ = try reader.string()                                     // key id
        _ = try reader.string()                                     // principals
        try reader.skip(16)                                         // valid after, before
        for _ in 0..<4 { _ = try reader.string() }                  // critical options, extensions, reserved, CA key
        let signedEnd = reader.offset
        let signatureBlob = try reader.string()
        guard reader.offset == blob.count else { throw TestFleetError.toolFailed("trailing bytes after the certificate") }
        var inner = CertificateReader(signatureBlob)
        let algorithm = String(decoding: try inner.string(), as: UTF8.self)
        let signature = try inner.string()
        return Parts(signed: Array(blob[..<signedEnd]), signatureAlgorithm: algorithm, signature: signature)
    }

    /// One bit of the CA signature flipped (its last byte): everything decodes, the CA signature
    /// does not verify. The certified key is intact, so the exchange signature still verifies.
    public static func forged(_ blob: [UInt8]) throws -> [UInt8] {
        _ = try parts(blob)
        var forged = blob
        forged[forged.count - 1] ^= 0x01
        return forged
    }

    /// The CA signature cut in half: the key type, nonce and certified key are intact (so the
    /// signature over the exchange hash verifies with the certified key), the blob does not decode.
    public static func undecodable(_ blob: [UInt8]) throws -> [UInt8] {
        let split = try parts(blob)
        let signatureLength = blob.count - split.signed.count - 4
        return Array(blob[..<(split.signed.count + 4 + signatureLength / 2)])
    }

    /// Garbage after a valid certificate: decoders that check for trailing data refuse it.
    public static func trailingGarbage(_ blob: [UInt8]) throws -> [UInt8] {
        _ = try parts(blob)
        return blob + Array("\u{0}garbage".utf8)
    }

    /// The CA signature's algorithm name changed to `ssh-rsa` (SHA-1), the signature bytes kept (an
    /// `rsa-sha2-512` or `rsa-sha2-256` signature by an RSA CA), so the label lies about the hash.
    public static func relabelledToSHA1(_ blob: [UInt8]) throws -> [UInt8] {
        let split = try parts(blob)
        guard split.signatureAlgorithm.hasPrefix("rsa-sha2-") else {
            throw TestFleetError.toolFailed("relabelling needs an RSA CA signature, not \(split.signatureAlgorithm)")
        }
        var signatureBlob: [UInt8] = []
        appendString(Array("ssh-rsa".utf8), to: &signatureBlob)
        appendString(split.signature, to: &signatureBlob)
        var out = split.signed
        appendString(signatureBlob, to: &out)
        return out
    }

    static func appendString(_ bytes: [UInt8], to out: inout [UInt8]) {
        let n = UInt32(bytes.count)
        out += [UInt8(n >> 24), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)] + bytes
    }
}

/// Odd but valid encodings of plain keys, for what a stock sshd will not serve.
public enum OddKeys {
    /// An `ssh-rsa` blob with `extraZeros` more zero bytes in front of the modulus: the same key to
    /// OpenSSH (`sshbuf_get_bignum2_bytes_direct` drops them), other bytes on the wire. The server
    /// signs with the same private key, so the exchange signature still verifies.
    public static func zeroPaddedRSA(_ blob: [UInt8], extraZeros: Int = 1) throws -> [UInt8] {
        var reader = CertificateReader(blob)
        let type = try reader.string(), e = try reader.string(), n = try reader.string()
        guard type == Array("ssh-rsa".utf8), reader.offset == blob.count else {
            throw TestFleetError.toolFailed("not a plain ssh-rsa key")
        }
        var out: [UInt8] = []
        for field in [type, e, [UInt8](repeating: 0, count: extraZeros) + n] {
            let count = UInt32(field.count)
            out += [UInt8(count >> 24), UInt8(count >> 16 & 0xff), UInt8(count >> 8 & 0xff), UInt8(count & 0xff)] + field
        }
        return out
    }
}

/// SSH wire strings, for certificate surgery.
struct CertificateReader {
    let bytes: [UInt8]
    var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func skip(_ count: Int) throws {
        guard offset + count <= bytes.count else { throw TestFleetError.toolFailed("certificate too short") }
        offset += count
    }

    mutating func string() throws -> [UInt8] {
        try skip(4)
        let n = bytes[(offset - 4)..<offset].reduce(0) { $0 << 8 | Int($1) }
        try skip(n)
        return Array(bytes[(offset - n)..<offset])
    }
}
