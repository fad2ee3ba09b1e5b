import FleetTrustCore
import XCTest
@testable import FleetTrustSSH

/// Each STARTTLS prelude against server transcripts: what the client sends, when it upgrades,
/// and every way a server can withhold or subvert the upgrade (stripped offers, refusals,
/// injected bytes, floods, broken BER), without a socket.
final class StartTLSDialogueTests: XCTestCase {
    /// Feeds the server's chunks in turn; returns what the client sent and the last step.
    private func converse(_ service: StartTLSProtocol, _ chunks: [[UInt8]]) -> (sent: [String], end: StartTLSDialogue.Step) {
        var dialogue = StartTLSDialogue(service)
        var sent = dialogue.opening.isEmpty ? [] : [String(decoding: dialogue.opening, as: UTF8.self)]
        for chunk in chunks {
            dialogue.receive(chunk)
            loop: while true {
                switch dialogue.next() {
                case .send(let bytes): sent.append(String(decoding: bytes, as: UTF8.self))
                case .wait: break loop
                case let end: return (sent, end)
                }
            }
        }
        return (sent, .wait)
    }

    private func converse(_ service: StartTLSProtocol, _ lines: [String]) -> (sent: [String], end: StartTLSDialogue.Step) {
        converse(service, lines.map { Array($0.utf8) })
    }

    private func assertFails(_ outcome: (sent: [String], end: StartTLSDialogue.Step), _ kind: StartTLSDialogue.Failure.Kind,
                             _ words: String, file: StaticString = #filePath, line: UInt = #line) {
        guard case .fail(let failure) = outcome.end else {
            return XCTFail("expected a failure, got \(outcome.end)", file: file, line: line)
        }
        XCTAssertEqual(failure.kind, kind, failure.message, file: file, line: line)
        XCTAssertTrue(failure.message.contains(words), failure.message, file: file, line: line)
    }

    // MARK: SMTP

    func testSMTPWaitsForTheWholeGreetingAsksEHLOAndUpgradesOn220() {
        let outcome = converse(.smtp, ["220-mx.example.com ESMTP\r\n", "220 still greeting\r\n",
                                       "250-mx.example.com\r\n250-PIPELINING\r\n250-starttls\r\n250 8BITMIME\r\n", "220 2.0.0 Ready to start TLS\r\n"])
        XCTAssertEqual(outcome.sent, ["EHLO mail.example.com\r\n", "STARTTLS\r\n"])
        XCTAssertEqual(outcome.end, .upgrade)
    }

    func testSubmissionSpeaksSMTP() {
        let outcome = converse(.submission, ["220 mx\r\n", "250 STARTTLS\r\n", "220 go\r\n"])
        XCTAssertEqual(outcome.end, .upgrade)
        XCTAssertEqual(outcome.sent.last, "STARTTLS\r\n")
    }

    func testAStrippedSTARTTLSIsNotOfferedEvenWhenTheWordAppearsElsewhere() {
        // What a downgrading middlebox leaves: the keyword overwritten, the word in a greeting text.
        let outcome = converse(.smtp, ["220 mx STARTTLS welcome\r\n", "250-mx says STARTTLS\r\n250-XXXXXXXA\r\n250 SIZE 10240000\r\n"])
        XCTAssertEqual(outcome.sent, ["EHLO mail.example.com\r\n"], "STARTTLS is never sent when it is not offered")
        assertFails(outcome, .notOffered, "does not offer STARTTLS in its EHLO reply")
    }

    func testARefusedSTARTTLSAndARefusedSessionAreNamed() {
        assertFails(converse(.smtp, ["220 mx\r\n", "250 STARTTLS\r\n", "454 4.7.0 TLS not available\r\n"]), .notOffered,
                    "answered STARTTLS with \"454 4.7.0 TLS not available\"")
        assertFails(converse(.smtp, ["554 5.7.1 no service\r\n"]), .broken, "refused the session")
        assertFails(converse(.smtp, ["SSH-2.0-OpenSSH_9.2p1\r\n"]), .broken, "does not speak SMTP")
    }

    func testBytesAfterTheUpgradeAnswerAreAPlaintextInjection() {
        assertFails(converse(.smtp, ["220 mx\r\n", "250 STARTTLS\r\n", "220 go\r\n250 injected\r\n"]), .broken, "plaintext injection")
    }

    func testALineLongerThan8KiBAndAFloodOfShortLinesAreBounded() {
        assertFails(converse(.smtp, [[UInt8]](repeating: [UInt8(ascii: "2")], count: 9000)), .broken, "longer than 8 KiB")
        let flood = [[UInt8]](repeating: Array("220-x\r\n".utf8), count: 10_000)
        let outcome = converse(.smtp, flood)
        assertFails(outcome, .broken, "more than 64 KiB")
    }

    // MARK: IMAP and POP3

    func testIMAPAsksForCapabilitiesAndUpgradesOnTaggedOK() {
        let outcome = converse(.imap, ["* OK [CAPABILITY IMAP4rev1 STARTTLS] ready\r\n",
                                       "* CAPABILITY IMAP4rev1 SASL-IR STARTTLS LOGINDISABLED\r\na OK done\r\n", "b OK Begin TLS negotiation now\r\n"])
        XCTAssertEqual(outcome.sent, ["a CAPABILITY\r\n", "b STARTTLS\r\n"])
        XCTAssertEqual(outcome.end, .upgrade)
    }

    func testIMAPWithoutSTARTTLSInItsCapabilitiesOrPreauthenticatedIsNotOffered() {
        // The greeting's own capability text does not count: the CAPABILITY answer decides.
        assertFails(converse(.imap, ["* OK [CAPABILITY IMAP4rev1 STARTTLS] hi\r\n", "* CAPABILITY IMAP4rev1 AUTH=PLAIN\r\na OK\r\n"]),
                    .notOffered, "does not list STARTTLS")
        assertFails(converse(.imap, ["* PREAUTH logged in\r\n"]), .notOffered, "pre-authenticated")
        assertFails(converse(.imap, ["* OK hi\r\n", "* CAPABILITY STARTTLS\r\na OK\r\n", "b NO not now\r\n"]), .notOffered,
                    "answered STARTTLS with \"b NO not now\"")
    }

    func testPOP3UpgradesOnOKToSTLSAndNamesARefusal() {
        let outcome = converse(.pop3, ["+OK Dovecot ready.\r\n", "+OK Begin TLS negotiation now.\r\n"])
        XCTAssertEqual(outcome.sent, ["STLS\r\n"])
        XCTAssertEqual(outcome.end, .upgrade)
        assertFails(converse(.pop3, ["+OK ready\r\n", "-ERR Unknown command.\r\n"]), .notOffered, "answered STLS with \"-ERR Unknown command.\"")
        assertFails(converse(.pop3, ["HTTP/1.1 400 Bad Request\r\n"]), .broken, "does not speak POP3")
    }

    // MARK: LDAP and PostgreSQL

    func testTheLDAPRequestIsTheStartTLSExtendedOperationOpenSSLSends() {
        let expected: [UInt8] = [0x30, 0x1D, 0x02, 0x01, 0x01, 0x77, 0x18, 0x80, 0x16] + Array("1.3.6.1.4.1.1466.20037".utf8)
        XCTAssertEqual(StartTLSBinaryMessages.ldapRequest, expected)
    }

    func testLDAPUpgradesOnResultZeroEvenWhenItArrivesInPieces() {
        let success: [UInt8] = [0x30, 0x0C, 0x02, 0x01, 0x01, 0x78, 0x07, 0x0A, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00]
        let outcome = converse(.ldap, [Array(success[..<5]), Array(success[5...])])
        XCTAssertEqual(outcome.end, .upgrade)
    }

    func testLDAPRefusalsDisconnectionsAndBrokenBERAreNamed() {
        let diagnostic = Array("unsupported extended operation".utf8)
        let body: [UInt8] = [0x0A, 0x01, 0x02, 0x04, 0x00, 0x04, UInt8(diagnostic.count)] + diagnostic
        let refused: [UInt8] = [0x30, UInt8(5 + body.count), 0x02, 0x01, 0x01, 0x78, UInt8(body.count)] + body
        assertFails(converse(.ldap, [refused]), .notOffered, "result 2: \"unsupported extended operation\"")
        let notice: [UInt8] = [0x30, 0x0C, 0x02, 0x01, 0x00, 0x78, 0x07, 0x0A, 0x01, 0x34, 0x04, 0x00, 0x04, 0x00]
        assertFails(converse(.ldap, [notice]), .broken, "notice of disconnection")
        assertFails(converse(.ldap, [[0x30, 0x80, 0x02, 0x01, 0x01]]), .broken, "indefinite BER length")
        assertFails(converse(.ldap, [[0x30, 0x84, 0x7F, 0xFF, 0xFF, 0xFF]]), .broken, "at most 16384")
        assertFails(converse(.ldap, [[0x04, 0x02, 0x41, 0x42]]), .broken, "not an LDAPMessage")
    }

    func testPostgresSendsTheSSLRequestAndUpgradesOnSAlone() {
        XCTAssertEqual(StartTLSBinaryMessages.postgresSSLRequest, [0, 0, 0, 8, 0x04, 0xD2, 0x16, 0x2F])
        XCTAssertEqual(UInt32(0x04D2162F), 80_877_103)
        XCTAssertEqual(converse(.postgres, ["S"]).end, .upgrade)
        assertFails(converse(.postgres, ["N"]), .notOffered, "does not offer SSL")
        assertFails(converse(.postgres, ["SE"]), .broken, "plaintext injection")
        assertFails(converse(.postgres, ["EFATAL"]), .broken, "an error message")
    }
}
