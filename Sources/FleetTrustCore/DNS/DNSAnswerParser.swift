/// Reads the SSHFP records out of a DNS response message (RFC 1035 section 4), as OpenSSH's
/// `getrrsetbyname` does with what `res_query` returned: the AD bit of the header, then every
/// answer-section record of class IN and type SSHFP, whatever its owner name (a CNAME chain's
/// target owns them); the RRSIGs and other types are skipped.
///
/// The message is untrusted input from the network: at most 65535 bytes are read, every length
/// is checked against what is left, names are checked as `dn_expand` checks them (a compression
/// loop or a pointer out of the message ends the read), and a message that breaks any rule is
/// malformed as a whole, as `getrrsetbyname` fails it (`ssh` then uses no record).
public enum DNSAnswerParser {
    /// RFC 4255's type number.
    static let sshfpType: UInt16 = 44
    static let classIN: UInt16 = 1
    /// `getrrsetbyname`'s answer buffer.
    public static let maximumMessageSize = 65535

    public enum Malformed: Error, Equatable, CustomStringConvertible {
        case truncated(at: Int)
        case badLabel(at: Int)
        case tooLarge(Int)
        case notAResponse

        public var description: String {
            switch self {
            case .truncated(let offset): return "the DNS answer ends inside a record (byte \(offset))"
            case .badLabel(let offset): return "the DNS answer has a malformed name (byte \(offset))"
            case .tooLarge(let size): return "the DNS answer is \(size) bytes, over \(DNSAnswerParser.maximumMessageSize)"
            case .notAResponse: return "the DNS message is not a response"
            }
        }
    }

    /// The SSHFP records and the AD bit of one response message.
    public static func parse(_ message: [UInt8]) -> Result<SSHFPAnswer, Malformed> {
        guard message.count <= maximumMessageSize else { return .failure(.tooLarge(message.count)) }
        var reader = Reader(bytes: message)
        do {
            let header = try reader.bytes(12)
            guard header[2] & 0x80 != 0 else { return .failure(.notAResponse) }
            let validated = header[3] & 0x20 != 0
            let questions = Int(header[4]) << 8 | Int(header[5])
            let answers = Int(header[6]) << 8 | Int(header[7])
            for _ in 0..<questions {
                try reader.skipName()
                _ = try reader.bytes(4)
            }
            var records: [SSHFPRecord] = []
            for _ in 0..<answers {
                try reader.skipName()
                let fixed = try reader.bytes(10)
                let type = UInt16(fixed[0]) << 8 | UInt16(fixed[1])
                let rrClass = UInt16(fixed[2]) << 8 | UInt16(fixed[3])
                let length = Int(fixed[8]) << 8 | Int(fixed[9])
                let data = try reader.bytes(length)
                // `dns_read_rdata`: a record shorter than its two number bytes is skipped ("Error parsing fingerprint").
                guard type == sshfpType, rrClass == classIN, data.count >= 2 else { continue }
                records.append(SSHFPRecord(algorithm: data[0], digestType: data[1], digest: Array(data[2...])))
            }
            return .success(records.isEmpty ? .none(why: "no SSHFP record") : .records(records, validated: validated))
        } catch {
            return .failure(error)
        }
    }

    /// A cursor over the message that never reads past its end.
    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        /// The next `count` bytes, indexed from 0.
        mutating func bytes(_ count: Int) throws(Malformed) -> [UInt8] {
            guard count >= 0, count <= bytes.count - offset else { throw .truncated(at: offset) }
            defer { offset += count }
            return Array(bytes[offset..<offset + count])
        }

        /// Steps over one encoded name, checking it as `dn_expand` (`ns_name_unpack`) does, since
        /// `getrrsetbyname` fails a message whose names it cannot expand: compression pointers are
        /// followed within the message, a loop ends when the bytes checked reach the message's
        /// length, a label of the reserved kinds (0x40, 0x80) or a name over 255 bytes is malformed.
        mutating func skipName() throws(Malformed) {
            var cursor = offset
            var jumped = false
            var checked = 0
            var length = 1
            while true {
                guard cursor < bytes.count else { throw .truncated(at: cursor) }
                let label = bytes[cursor]
                switch label & 0xc0 {
                case 0x00:
                    cursor += 1
                    if label == 0 {
                        if !jumped { offset = cursor }
                        return
                    }
                    length += Int(label) + 1
                    checked += Int(label) + 1
                    guard length <= 255 else { throw .badLabel(at: cursor - 1) }
                    guard Int(label) <= bytes.count - cursor else { throw .truncated(at: cursor) }
                    cursor += Int(label)
                case 0xc0:
                    guard cursor + 1 < bytes.count else { throw .truncated(at: cursor) }
                    let target = Int(label & 0x3f) << 8 | Int(bytes[cursor + 1])
                    if !jumped { offset = cursor + 2 }
                    jumped = true
                    checked += 2
                    guard target < bytes.count, checked < bytes.count else { throw .badLabel(at: cursor) }
                    cursor = target
                default:
                    throw .badLabel(at: cursor)
                }
            }
        }
    }
}
