import FleetTrustCore

/// The protocol version exchange of RFC 4253 §4.2, read with the limits of OpenSSH 9.2's
/// `kex_exchange_identification` (kex.c), not the RFC's: a server `ssh` talks to, we talk to.
///
/// A server may send other lines before its `SSH-` line; we skip as many as `ssh` does (and keep
/// a few, cleaned, for the operator), so a port that streams text forever cannot hold us.
enum IdentificationExchange {
    /// Our identification, without CR LF (it enters the exchange hash that way): the local `ssh`'s.
    static var clientVersion: [UInt8] { ClientIdentification.line }
    /// `SSH_MAX_BANNER_LEN` (ssh.h): every line, the identification too, at most 8192 bytes
    /// without its CR and LF (RFC 4253 says 255; `ssh` accepts more, so must we).
    static let lineLimit = 8192
    /// `SSH_MAX_PRE_BANNER_LINES` (ssh.h): the identification must be among the first 1024 lines.
    static let lineCountLimit = 1024
    static let keptPreambleLines = 16

    struct ServerIdentification {
        /// The raw identification line without CR LF, as hashed.
        var version: [UInt8]
        /// Lines the server sent before it, cleaned for printing.
        var preamble: [String]
    }

    /// Reads the server's identification as its lines arrive: lines before the `SSH-` line are
    /// consumed one by one (a few kept, cleaned), so bytes trickling in are never parsed twice.
    struct Reader {
        private var preamble: [String] = []
        private var firstLine: [UInt8]?
        private var lines = 0

        /// The identification once its line is complete, nil while more bytes are needed.
        mutating func read(from buffer: inout ReceiveBuffer) throws(ProbeFailure) -> ServerIdentification? {
            while true {
                let taken: [UInt8]?
                do {
                    // One CR before the LF is within the limit; `ssh` also skips further CRs,
                    // which count against it here (a line of 8192 bytes and two CRs is refused).
                    taken = try buffer.takeLine(limit: lineLimit + 2)
                } catch {
                    throw failure(.lineTooLong, in: buffer)
                }
                guard let line = taken else { return nil }
                guard line.count <= lineLimit else { throw failure(.lineTooLong, in: buffer) }
                lines += 1
                // kex.c: a NUL, or a CR followed by anything but a CR or the LF, ends the exchange,
                // before or in the identification alike.
                let text = line.lastIndex(where: { $0 != 0x0d }).map { line[...$0] } ?? []
                guard !text.contains(0), !text.contains(0x0d) else {
                    throw ProbeFailure(stage: .banner, code: .notSSH, message: "the server sent a line with invalid characters")
                }
                // kex.c: a line is the identification when it is longer than "SSH-" and starts with it.
                if text.count > 4 && text.starts(with: Array("SSH-".utf8)) {
                    return ServerIdentification(version: try checkedVersion(Array(text)), preamble: preamble)
                }
                if firstLine == nil { firstLine = Array(text) }
                if preamble.count < keptPreambleLines { preamble.append(Sanitizer.clean(bytes: Array(text), limit: 255)) }
                guard lines < lineCountLimit else { throw notSSH(firstLine ?? Array(text)) }
            }
        }

        /// Why the identification never came, when the connection ended or stalled with `buffer`
        /// holding what the server said instead.
        func failure(_ error: TransportSocket.Failure, in buffer: ReceiveBuffer) -> ProbeFailure {
            IdentificationExchange.failure(error, heard: buffer.total == 0 ? nil : firstLine ?? buffer.unread(upTo: 60))
        }
    }

    /// kex.c: `sscanf(line, "SSH-%d.%d-%[^\n]\n", ...)` must read three fields, and the version
    /// must be 2.x or 1.99.
    private static func checkedVersion(_ line: [UInt8]) throws(ProbeFailure) -> [UInt8] {
        var rest = line.dropFirst(4)
        let major = scanInteger(&rest)
        let dot = rest.popFirst()
        let minor = scanInteger(&rest)
        let dash = rest.popFirst()
        guard let major, dot == UInt8(ascii: "."), let minor, dash == UInt8(ascii: "-"), !rest.isEmpty else {
            throw ProbeFailure(stage: .banner, code: .notSSH, message: "the server's identification string is malformed")
        }
        guard major == 2 || (major == 1 && minor == 99) else {
            let version = Sanitizer.clean(bytes: Array(line.dropFirst(4).prefix { $0 != UInt8(ascii: "-") }), limit: 16)
            throw ProbeFailure(stage: .banner, code: .notSSH, message: "the server speaks SSH protocol \(version), not 2.0")
        }
        return line
    }

    /// `%d` of sscanf: optional white space, an optional sign, then at least one digit (a value
    /// too large for an `int` is undefined in C; it is simply not 1 or 2 here).
    private static func scanInteger(_ text: inout ArraySlice<UInt8>) -> Int? {
        while let first = text.first, first == 0x20 || (0x09...0x0d).contains(first) { text.removeFirst() }
        var negative = false
        if let sign = text.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            negative = sign == UInt8(ascii: "-")
            text.removeFirst()
        }
        var value = 0, digits = 0
        while let digit = text.first, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) {
            value = min(value * 10 + Int(digit - UInt8(ascii: "0")), 1 << 40)
            digits += 1
            text.removeFirst()
        }
        return digits == 0 ? nil : negative ? -value : value
    }

    /// `heard` is what the peer said instead of an identification, nil if it said nothing. A
    /// server still in the middle of its `SSH-` line is slow or cut off, not a stranger.
    private static func failure(_ error: TransportSocket.Failure, heard: [UInt8]?) -> ProbeFailure {
        let prefix = Array("SSH-".utf8)
        guard let heard, !heard.starts(with: prefix) && !prefix.starts(with: heard) else {
            return KeyExchangeFailures.transport(error, stage: .banner)
        }
        return notSSH(heard)
    }

    private static func notSSH(_ heard: [UInt8]) -> ProbeFailure {
        let quoted = heard.isEmpty ? "" : "; it said \"\(Sanitizer.clean(bytes: heard, limit: 60))\""
        return ProbeFailure(stage: .banner, code: .notSSH, message: "the server does not speak SSH\(quoted)")
    }
}
