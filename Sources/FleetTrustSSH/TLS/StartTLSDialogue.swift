import FleetTrustCore

/// The plain-text prelude of one STARTTLS endpoint as a state machine over the server's bytes:
/// fed what arrives, it says what to send, to wait, to start the TLS handshake, or why not. No
/// sockets here (`StartTLSExchange` drives it), so every hostile transcript is a unit test.
///
/// Each protocol asks as `openssl s_client -starttls` does (apps/s_client.c, OpenSSL 3.0), but
/// reads the answers strictly where s_client carries on regardless: SMTP waits for the 220
/// greeting, sends `EHLO mail.example.com` (s_client's default name), needs `STARTTLS` among the
/// EHLO keywords and 220 to `STARTTLS`; IMAP needs `STARTTLS` in the `CAPABILITY` answer and OK
/// to `STARTTLS`; POP3 needs `+OK` to `STLS`; LDAP sends the StartTLS extended request
/// (`StartTLSBinaryMessages`) and needs result 0; PostgreSQL sends the SSLRequest and needs `S`.
/// s_client tries the upgrade anyway when it is not offered; here a missing offer is the
/// endpoint's answer (`starttls-not-offered`): a stripped STARTTLS must never look like a pass.
/// Bytes after the answer that permits the upgrade and before the handshake are refused (a
/// plaintext injection, as Postfix and libpq refuse it).
struct StartTLSDialogue {
    /// What the dialogue wants next.
    enum Step: Equatable {
        case send([UInt8])
        case wait
        case upgrade
        case fail(Failure)
    }

    /// Why the upgrade did not happen: the server does not offer it, or it broke the protocol.
    struct Failure: Equatable, Error {
        enum Kind: Equatable { case notOffered, broken }
        var kind: Kind
        var message: String
    }

    /// The longest line a server may send (s_client reads 16 KiB at a time; SMTP allows 512).
    static let maximumLineBytes = 8 * 1024
    /// The most a server may send before the upgrade: a capability list is a few hundred bytes.
    static let maximumBytes = 64 * 1024
    /// The name SMTP's EHLO carries, as `openssl s_client -starttls smtp` sends it.
    static let ehloName = "mail.example.com"

    private enum State { case greeting, capabilities, upgrade }

    let service: StartTLSProtocol
    private var state = State.greeting
    private var pending: [UInt8] = []
    /// How much of `pending` is known to hold no line end: a line dribbled byte by byte is
    /// searched once, not once per byte.
    private var searched = 0
    private var received = 0
    private var reply: [String] = []
    private var offered = false

    init(_ service: StartTLSProtocol) {
        self.service = service
    }

    /// What the client says before the server speaks: LDAP's and PostgreSQL's requests; empty
    /// for the protocols whose server greets first.
    var opening: [UInt8] {
        switch service.dialect {
        case .ldap: return StartTLSBinaryMessages.ldapRequest
        case .postgres: return StartTLSBinaryMessages.postgresSSLRequest
        default: return []
        }
    }

    /// Whether the server has said anything at all (a silent port is unreachable, not broken).
    var heardAnything: Bool { received > 0 }

    /// Takes bytes the server sent; `next()` then says what they mean.
    mutating func receive(_ bytes: some Collection<UInt8>) {
        pending.append(contentsOf: bytes)
        received += bytes.count
    }

    /// What to do next with everything received so far.
    mutating func next() -> Step {
        if received > Self.maximumBytes {
            return broken("sent more than \(Self.maximumBytes / 1024) KiB without upgrading")
        }
        switch service.dialect {
        case .ldap, .postgres: return binaryAnswer()
        default:
            while let line = takeLine() {
                switch line {
                case .failure(let failure): return .fail(failure)
                case .success(let text):
                    if let step = answer(text) { return step }
                }
            }
            if pending.count > Self.maximumLineBytes {
                return broken("sent a line longer than \(Self.maximumLineBytes / 1024) KiB")
            }
            return .wait
        }
    }

    /// One line, without its line end; a failure when it is too long.
    private mutating func takeLine() -> Result<String, Failure>? {
        guard let end = pending[searched...].firstIndex(of: UInt8(ascii: "\n")) else {
            searched = pending.count
            return nil
        }
        searched = 0
        guard end <= Self.maximumLineBytes else {
            return .failure(Failure(kind: .broken, message: "the \(service.displayName) server sent a line longer than \(Self.maximumLineBytes / 1024) KiB"))
        }
        var line = pending[..<end]
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        pending.removeSubrange(...end)
        return .success(String(decoding: line, as: UTF8.self))
    }

    /// The step a line leads to, nil to read the next line.
    private mutating func answer(_ line: String) -> Step? {
        switch service.dialect {
        case .imap: return imap(line)
        case .pop3: return pop3(line)
        default: return smtp(line)
        }
    }

    // MARK: SMTP (RFC 5321 replies, RFC 3207 STARTTLS)

    private mutating func smtp(_ line: String) -> Step? {
        let bytes = Array(line.utf8)
        guard bytes.count >= 3, bytes[..<3].allSatisfy({ (0x30...0x39).contains($0) }),
              bytes.count == 3 || bytes[3] == UInt8(ascii: " ") || bytes[3] == UInt8(ascii: "-") else {
            return broken("does not speak SMTP: \(quoted(line))")
        }
        reply.append(line)
        if bytes.count > 3 && bytes[3] == UInt8(ascii: "-") { return nil }
        let code = String(line.prefix(3))
        let lines = reply
        reply = []
        switch state {
        case .greeting:
            guard code == "220" else { return broken("refused the session: \(quoted(line))") }
            state = .capabilities
            return .send(Array("EHLO \(Self.ehloName)\r\n".utf8))
        case .capabilities:
            guard code == "250" else { return broken("refused EHLO: \(quoted(line))") }
            let keywords = lines.map { $0.dropFirst(4).split(separator: " ").first.map { $0.uppercased() } ?? "" }
            guard keywords.contains("STARTTLS") else { return notOffered("does not offer STARTTLS in its EHLO reply") }
            state = .upgrade
            return .send(Array("STARTTLS\r\n".utf8))
        case .upgrade:
            guard code == "220" else { return notOffered("answered STARTTLS with \(quoted(line))") }
            return upgradeIfQuiet()
        }
    }

    // MARK: IMAP (RFC 3501 6.2.1)

    private mutating func imap(_ line: String) -> Step? {
        let words = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        let status = words.count > 1 ? words[1].uppercased() : ""
        switch state {
        case .greeting:
            guard words.first == "*" else { return broken("does not speak IMAP: \(quoted(line))") }
            switch status {
            case "OK":
                state = .capabilities
                return .send(Array("a CAPABILITY\r\n".utf8))
            case "PREAUTH": return notOffered("pre-authenticated the session, where STARTTLS is not allowed: \(quoted(line))")
            default: return broken("refused the session: \(quoted(line))")
            }
        case .capabilities:
            if words.first == "*" {
                if status == "CAPABILITY", words.count > 2, words[2].split(separator: " ").contains(where: { $0.uppercased() == "STARTTLS" }) {
                    offered = true
                }
                return nil
            }
            guard words.first == "a" else { return broken("does not speak IMAP: \(quoted(line))") }
            guard status == "OK" else { return broken("answered CAPABILITY with \(quoted(line))") }
            guard offered else { return notOffered("does not list STARTTLS in its CAPABILITY answer") }
            state = .upgrade
            return .send(Array("b STARTTLS\r\n".utf8))
        case .upgrade:
            if words.first == "*" { return nil }
            guard words.first == "b" else { return broken("does not speak IMAP: \(quoted(line))") }
            guard status == "OK" else { return notOffered("answered STARTTLS with \(quoted(line))") }
            return upgradeIfQuiet()
        }
    }

    // MARK: POP3 (RFC 2595 4)

    private mutating func pop3(_ line: String) -> Step? {
        let status = line.split(separator: " ", maxSplits: 1).first.map { $0.uppercased() } ?? ""
        guard status == "+OK" || status == "-ERR" else { return broken("does not speak POP3: \(quoted(line))") }
        switch state {
        case .greeting, .capabilities:
            guard status == "+OK" else { return broken("refused the session: \(quoted(line))") }
            state = .upgrade
            return .send(Array("STLS\r\n".utf8))
        case .upgrade:
            guard status == "+OK" else { return notOffered("answered STLS with \(quoted(line))") }
            return upgradeIfQuiet()
        }
    }

    // MARK: LDAP and PostgreSQL: one binary answer

    private mutating func binaryAnswer() -> Step {
        if service.dialect == .postgres {
            guard let first = pending.first else { return .wait }
            switch first {
            case UInt8(ascii: "S"):
                pending.removeFirst()
                return upgradeIfQuiet()
            case UInt8(ascii: "N"): return notOffered("answered the SSLRequest with N: it does not offer SSL")
            case UInt8(ascii: "E"): return broken("answered the SSLRequest with an error message")
            default: return broken("does not speak PostgreSQL (it answered the SSLRequest with byte \(first))")
            }
        }
        switch StartTLSBinaryMessages.ldapResponse(pending) {
        case .incomplete: return .wait
        case .malformed(let why): return broken("does not speak LDAP: \(why)")
        case .response(let response):
            pending.removeFirst(response.length)
            guard response.messageID == 1 else {
                return broken(response.messageID == 0 ? "sent a notice of disconnection (result \(response.resultCode)\(diagnostic(response.diagnostic)))"
                              : "answered message \(response.messageID), not the StartTLS request")
            }
            guard response.resultCode == 0 else {
                return notOffered("refused the StartTLS request: result \(response.resultCode)\(diagnostic(response.diagnostic))")
            }
            return upgradeIfQuiet()
        }
    }

    // MARK: Answers

    /// The upgrade, unless the server already sent more: those bytes would be read as the TLS
    /// handshake's, or, after it, as protected data (CVE-2011-0411, CVE-2021-23214).
    private func upgradeIfQuiet() -> Step {
        guard pending.isEmpty else {
            return broken("sent \(pending.count) bytes after permitting the upgrade, before the TLS handshake (plaintext injection)")
        }
        return .upgrade
    }

    private func notOffered(_ what: String) -> Step {
        .fail(Failure(kind: .notOffered, message: "the \(service.displayName) server \(what)"))
    }

    private func broken(_ what: String) -> Step {
        .fail(Failure(kind: .broken, message: "the \(service.displayName) server \(what)"))
    }

    private func quoted(_ line: String) -> String {
        "\"" + CleanText(line, limit: 120).value + "\""
    }

    private func diagnostic(_ text: String) -> String {
        text.isEmpty ? "" : ": " + quoted(text)
    }
}
