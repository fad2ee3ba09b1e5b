/// The two binary STARTTLS requests, and a bounded reader of LDAP's answer: BER written and read
/// by hand (a handful of definite-length TLVs), so a hostile server's bytes meet nothing but
/// bounds-checked indexing.
enum StartTLSBinaryMessages {
    /// PostgreSQL's SSLRequest: length 8, then the code 80877103 (1234 << 16 | 5679), as libpq
    /// and `openssl s_client -starttls postgres` send it.
    static let postgresSSLRequest: [UInt8] = [0, 0, 0, 8, 0x04, 0xD2, 0x16, 0x2F]

    /// The StartTLS OID of RFC 4511 4.14.1.
    static let startTLSOID = "1.3.6.1.4.1.1466.20037"

    /// LDAPMessage { messageID 1, extendedReq [APPLICATION 23] { requestName [0] startTLSOID } },
    /// the bytes `openssl s_client -starttls ldap` sends.
    static let ldapRequest: [UInt8] = {
        let name = Array(StartTLSBinaryMessages.startTLSOID.utf8)
        let operation = StartTLSBinaryMessages.tlv(0x77, StartTLSBinaryMessages.tlv(0x80, name))
        return StartTLSBinaryMessages.tlv(0x30, [0x02, 0x01, 0x01] + operation)
    }()

    /// The most an LDAP answer to StartTLS may take (its diagnostic message is a sentence).
    static let maximumLDAPMessageBytes = 16 * 1024

    /// An ExtendedResponse to a request, as far as deciding the upgrade needs it.
    struct LDAPResponse: Equatable {
        var messageID: Int
        var resultCode: Int
        var diagnostic: String
        /// Bytes of the whole LDAPMessage.
        var length: Int
    }

    enum LDAPAnswer: Equatable {
        case incomplete
        case malformed(String)
        case response(LDAPResponse)
    }

    /// The first LDAPMessage in `bytes`: incomplete until all of it is there.
    static func ldapResponse(_ bytes: [UInt8]) -> LDAPAnswer {
        var outer = BERReader(bytes[...])
        let message: BERReader.Element
        switch outer.element(limit: maximumLDAPMessageBytes) {
        case .incomplete: return .incomplete
        case .malformed(let why): return .malformed(why)
        case .element(let element): message = element
        }
        guard message.tag == 0x30 else { return .malformed("its answer is not an LDAPMessage (tag \(message.tag))") }
        var fields = BERReader(message.content)
        guard case .element(let id) = fields.element(limit: 8), id.tag == 0x02, (1...4).contains(id.content.count) else {
            return .malformed("its answer has no message ID")
        }
        guard case .element(let operation) = fields.element(limit: maximumLDAPMessageBytes), operation.tag == 0x78 else {
            return .malformed("its answer is not an extended response")
        }
        var result = BERReader(operation.content)
        guard case .element(let code) = result.element(limit: 8), code.tag == 0x0A, (1...4).contains(code.content.count),
              case .element(let matched) = result.element(limit: maximumLDAPMessageBytes), matched.tag == 0x04,
              case .element(let diagnostic) = result.element(limit: maximumLDAPMessageBytes), diagnostic.tag == 0x04 else {
            return .malformed("its extended response has no result")
        }
        return .response(LDAPResponse(messageID: integer(id.content), resultCode: integer(code.content),
                                      diagnostic: String(decoding: diagnostic.content.prefix(512), as: UTF8.self),
                                      length: bytes.count - outer.remaining))
    }

    /// A non-negative big-endian integer of at most 4 bytes (negative ones read as large).
    private static func integer(_ bytes: ArraySlice<UInt8>) -> Int {
        bytes.reduce(0) { $0 << 8 | Int($1) }
    }

    private static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        precondition(content.count < 0x80, "short-form lengths only")
        return [tag, UInt8(content.count)] + content
    }
}

/// Definite-length BER elements with single-byte tags, read from the front of a buffer.
private struct BERReader {
    struct Element {
        var tag: UInt8
        var content: ArraySlice<UInt8>
    }

    enum Next {
        case incomplete
        case malformed(String)
        case element(Element)
    }

    private var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
    }

    var remaining: Int { bytes.count }

    /// The next element, refused when its content is longer than `limit`.
    mutating func element(limit: Int) -> Next {
        guard bytes.count >= 2 else { return .incomplete }
        let start = bytes.startIndex
        let tag = bytes[start]
        guard tag & 0x1F != 0x1F else { return .malformed("a multi-byte BER tag") }
        let first = Int(bytes[start + 1])
        var header = 2
        var length = first
        if first >= 0x80 {
            let count = first & 0x7F
            guard (1...4).contains(count) else { return .malformed(count == 0 ? "an indefinite BER length" : "a BER length of \(count) bytes") }
            guard bytes.count >= 2 + count else { return .incomplete }
            length = bytes[(start + 2)..<(start + 2 + count)].reduce(0) { $0 << 8 | Int($1) }
            header += count
        }
        guard length <= limit else { return .malformed("an element of \(length) bytes (at most \(limit))") }
        guard bytes.count >= header + length else { return .incomplete }
        let content = bytes[(start + header)..<(start + header + length)]
        bytes = bytes[(start + header + length)...]
        return .element(Element(tag: tag, content: content))
    }
}
