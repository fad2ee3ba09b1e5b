import COpenSSL
import Foundation

/// One X.509 certificate a TLS server sent, read through OpenSSL's own parser (no ASN.1 is
/// decoded here): the fields a sysadmin checks and a pin is made from.
///
/// Everything in it came from the server and is untrusted: text is cleaned and bounded, and any
/// bytes are read without crashing (a certificate that does not parse is a typed error).
public struct TLSCertificate: Hashable, Sendable {
    /// The certificate as sent.
    public let der: [UInt8]
    /// Distinguished names, RFC 2253 form.
    public let subject: CleanText
    public let issuer: CleanText
    /// Subject alternative names as `DNS:name` / `IP:address` (other kinds are not listed).
    public let subjectAltNames: [SubjectAltName]
    /// Validity bounds, seconds since the epoch.
    public let notBefore: Int64
    public let notAfter: Int64
    /// The serial number in hex.
    public let serial: String
    /// SHA-256 of the DER certificate, lowercase hex.
    public let sha256: String
    /// SHA-256 of the SubjectPublicKeyInfo, base64: what `pin-sha256:` pins (HPKP, TrustKit).
    public let spkiSHA256: String
    /// Issued by itself and signed by its own key.
    public let selfSigned: Bool
    /// `RSA`, `EC`, `ED25519`, … and the key size in bits.
    public let keyType: String
    public let keyBits: Int
    /// The signature algorithm (`sha256WithRSAEncryption`), and whether its digest is SHA-1.
    public let signatureAlgorithm: String
    public let signedWithSHA1: Bool

    /// Why bytes are not a certificate.
    public enum ReadError: Error, Hashable, Sendable, CustomStringConvertible {
        case empty, tooLarge(Int), notDER, trailingBytes, noPublicKey
        public var description: String {
            switch self {
            case .empty: return "the certificate is empty"
            case .tooLarge(let size): return "the certificate is \(size) bytes (at most \(TLSHandshake.maximumCertificateBytes))"
            case .notDER: return "the bytes are not a DER X.509 certificate"
            case .trailingBytes: return "the certificate is followed by extra bytes"
            case .noPublicKey: return "the certificate's public key cannot be read"
            }
        }
    }

    /// A subject alternative name the host-name check uses.
    public enum SubjectAltName: Hashable, Sendable {
        case dns(CleanText)
        case ip(String)

        /// `DNS:name` or `IP:address`.
        public var text: String {
            switch self {
            case .dns(let name): return "DNS:\(name.value)"
            case .ip(let address): return "IP:\(address)"
            }
        }
    }

    /// The pin a pin file writes for this certificate's key.
    public var pin: String { "pin-sha256:" + spkiSHA256 }
    /// The SPKI digest as a pin value.
    public var spkiPin: SPKIPin? { SPKIPin(spkiSHA256) }

    /// Reads `der`, or takes the certificate already read from the same bytes (see
    /// `TLSCertificateCache`): the same values either way.
    public init(der: [UInt8]) throws(ReadError) {
        self = try TLSCertificateCache.shared.parsed(der).certificate
    }

    /// The values of a certificate OpenSSL parsed from `der`; nil when its public key cannot be read.
    init?(der: [UInt8], x509: OpaquePointer) {
        guard let key = X509_get0_pubkey(x509) else { return nil }
        var spki: UnsafeMutablePointer<UInt8>?
        let spkiLength = i2d_PUBKEY(key, &spki)
        guard spkiLength > 0, let spki else { return nil }
        defer { CRYPTO_free(spki, #fileID, #line) }
        self.der = der
        spkiSHA256 = Base64.encode(Digest.sha256(Array(UnsafeBufferPointer(start: spki, count: Int(spkiLength)))))
        sha256 = Self.lowercaseHex(Digest.sha256(der))
        subject = Self.name(X509_get_subject_name(x509))
        issuer = Self.name(X509_get_issuer_name(x509))
        subjectAltNames = Self.altNames(x509)
        notBefore = Self.seconds(X509_get0_notBefore(x509)) ?? Int64.max
        notAfter = Self.seconds(X509_get0_notAfter(x509)) ?? Int64.min
        serial = Self.serialHex(x509)
        selfSigned = X509_self_signed(x509, 1) == 1
        let baseID = EVP_PKEY_get_base_id(key)
        keyType = baseID == EVP_PKEY_RSA ? "RSA" : baseID == EVP_PKEY_EC ? "EC" : baseID == EVP_PKEY_ED25519 ? "ED25519"
            : baseID == EVP_PKEY_ED448 ? "ED448" : baseID == EVP_PKEY_DSA ? "DSA" : "other"
        keyBits = Int(EVP_PKEY_get_bits(key))
        let signatureNID = X509_get_signature_nid(x509)
        signatureAlgorithm = CleanText(OBJ_nid2ln(signatureNID).map { String(cString: $0) } ?? "unknown", limit: 64).value
        var digestNID: Int32 = 0
        var keyNID: Int32 = 0
        signedWithSHA1 = OBJ_find_sigid_algs(signatureNID, &digestNID, &keyNID) == 1 && digestNID == NID_sha1
    }

    /// The DER of an OpenSSL certificate stack, in order, at most `limit`; it stops at the first
    /// certificate it cannot encode rather than skip it (skipping one would make the next the leaf).
    public static func derChain(_ stack: OpaquePointer, limit: Int) -> [[UInt8]] {
        var chain: [[UInt8]] = []
        for index in 0..<min(Int(fleettrust_x509_stack_count(stack)), limit) {
            guard let certificate = fleettrust_x509_stack_at(stack, Int32(index)) else { break }
            var bytes: UnsafeMutablePointer<UInt8>?
            let length = i2d_X509(certificate, &bytes)
            guard length > 0, let bytes else { break }
            chain.append(Array(UnsafeBufferPointer(start: bytes, count: Int(length))))
            CRYPTO_free(bytes, #fileID, #line)
        }
        return chain
    }

    /// Parses DER, refusing trailing bytes; the caller frees the result.
    static func parse(_ der: [UInt8]) -> OpaquePointer? {
        der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            guard let base = buffer.baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let x509 = d2i_X509(nil, &cursor, buffer.count) else {
                ERR_clear_error()
                return nil
            }
            guard let cursor, cursor == base + buffer.count else {
                X509_free(x509)
                return nil
            }
            return x509
        }
    }

    /// The certificate's key is weak: RSA or DSA under 2048 bits, EC under 256.
    public var hasWeakKey: Bool {
        switch keyType {
        case "RSA", "DSA": return keyBits < 2048
        case "EC": return keyBits < 256
        default: return false
        }
    }

    private static func lowercaseHex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static func name(_ name: OpaquePointer?) -> CleanText {
        guard let name, let bio = BIO_new(BIO_s_mem()) else { return CleanText("", limit: 1) }
        defer { BIO_free(bio) }
        _ = X509_NAME_print_ex(bio, name, 0, fleettrust_rfc2253_utf8_flags())
        return CleanText(readAll(bio), limit: 512)
    }

    private static func readAll(_ bio: OpaquePointer) -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while bytes.count < 16 * 1024 {
            let count = BIO_read(bio, &buffer, Int32(buffer.count))
            guard count > 0 else { break }
            bytes += buffer.prefix(Int(count))
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func altNames(_ x509: OpaquePointer) -> [SubjectAltName] {
        guard let raw = X509_get_ext_d2i(x509, NID_subject_alt_name, nil, nil) else { return [] }
        let names = OpaquePointer(raw)
        defer { fleettrust_general_names_free(names) }
        var result: [SubjectAltName] = []
        for index in 0..<min(fleettrust_general_names_count(names), 256) {
            guard let entry = fleettrust_general_names_at(names, index) else { continue }
            switch entry.pointee.type {
            case GEN_DNS:
                guard let string = entry.pointee.d.dNSName else { continue }
                result.append(.dns(CleanText(String(decoding: bytes(of: string), as: UTF8.self), limit: 253)))
            case GEN_IPADD:
                guard let string = entry.pointee.d.iPAddress else { continue }
                let raw = bytes(of: string)
                guard raw.count == 4 || raw.count == 16 else { continue }
                var text = [CChar](repeating: 0, count: 64)
                let family = raw.count == 4 ? AF_INET : AF_INET6
                guard inet_ntop(family, raw, &text, socklen_t(text.count)) != nil else { continue }
                result.append(.ip(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))
            default:
                continue
            }
        }
        return result
    }

    private static func bytes(of string: UnsafeMutablePointer<ASN1_STRING>) -> [UInt8] {
        let length = Int(ASN1_STRING_length(string))
        guard length > 0, let data = ASN1_STRING_get0_data(string) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: min(length, 4096)))
    }

    private static func seconds(_ time: UnsafePointer<ASN1_TIME>?) -> Int64? {
        guard let time else { return nil }
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
        return Int64(timegm(&parts))
    }

    private static func serialHex(_ x509: OpaquePointer) -> String {
        guard let integer = X509_get0_serialNumber(x509), let number = ASN1_INTEGER_to_BN(integer, nil) else { return "" }
        defer { BN_free(number) }
        guard let hex = BN_bn2hex(number) else { return "" }
        defer { CRYPTO_free(hex, #fileID, #line) }
        return CleanText(String(cString: hex).lowercased(), limit: 80).value
    }
}
