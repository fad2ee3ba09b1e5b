import FleetTrustCore

/// The protocol version exchange of RFC 4253 §4.2, bounded against hostile or confused peers.
///
/// A server may send other lines before its `SSH-` line; we skip a bounded number of them (and
/// keep a few, cleaned, for the operator), so a port that streams text forever cannot hold us.
enum IdentificationExchange {
    /// Our identification, without CR LF (it enters the exchange hash that way).
    static let clientVersion: [UInt8] = Array("SSH-2.0-fleettrust_1.0".utf8)
    /// RFC 4253: at most 255 bytes including CR LF.
    static let versionLineLimit = 253
    static let otherLineLimit = 8192
    static let totalLimit = 64 * 1024
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

        /// The identification once its line is complete, nil while more bytes are needed.
        mutating func read(from buffer: inout ReceiveBuffer) throws(ProbeFailure) -> ServerIdentification? {
            while true {
                let taken: [UInt8]?
                do {
                    taken = try buffer.takeLine(limit: otherLineLimit)
                } catch {
                    throw failure(.lineTooLong, in: buffer)
                }
                guard let line = taken else { return nil }
                if line.starts(with: Array("SSH-".utf8)) {
                    return ServerIdentification(version: try checkedVersion(line), preamble: preamble)
                }
                if firstLine == nil { firstLine = line }
                if preamble.count < keptPreambleLines { preamble.append(Sanitizer.clean(bytes: line, limit: 255)) }
                guard buffer.total <= totalLimit else { throw notSSH(firstLine ?? line) }
            }
        }

        /// Why the identification never came, when the connection ended or stalled with `buffer`
        /// holding what the server said instead.
        func failure(_ error: TransportSocket.Failure, in buffer: ReceiveBuffer) -> ProbeFailure {
            IdentificationExchange.failure(error, heard: buffer.total == 0 ? nil : firstLine ?? buffer.unread(upTo: 60))
        }
    }

    private static func checkedVersion(_ line: [UInt8]) throws(ProbeFailure) -> [UInt8] {
        guard line.count <= versionLineLimit else {
            throw ProbeFailure(stage: .banner, code: .notSSH, message: "the identification string is longer than 255 bytes")
        }
        let protocolVersion = line.dropFirst(4).prefix { $0 != UInt8(ascii: "-") }
        guard protocolVersion.elementsEqual("2.0".utf8) || protocolVersion.elementsEqual("1.99".utf8) else {
            throw ProbeFailure(stage: .banner, code: .notSSH,
                               message: "the server speaks SSH protocol \(Sanitizer.clean(bytes: Array(protocolVersion), limit: 16)), not 2.0")
        }
        return line
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
