import XCTest
@testable import FleetTrustCore

/// OpenSSH's command-line name rules (`ssh_valid_hostname`, `ssh_valid_ruser`), character by
/// character; the real `ssh` agrees (see the end-to-end oracle test).
final class SSHNamesTests: XCTestCase {
    func testHostNamesRefuseShellMetacharactersWhiteSpaceControlsCommasAndALeadingDash() {
        for good in ["web1", "web-1.example.com", "10.0.0.5", "2001:db8::1", "fe80::1%eth0", "[::1]", "höst", "a_b", "a+b", "a~b", "a*b", "a/b"] {
            XCTAssertNoThrow(try SSHHostName(good), good)
        }
        for character in "'`\"$\\;&<>|(){},".map(String.init) + [" ", "\t", "\n", "\r", "\u{0B}", "\u{0C}", "\u{01}", "\u{7F}"] {
            XCTAssertThrowsError(try SSHHostName("a\(character)b"), "host with \(character.debugDescription)") { error in
                XCTAssertEqual((error as? SSHNameError)?.problem, .character(Array(character.utf8)[0]))
            }
        }
        XCTAssertThrowsError(try SSHHostName("-oProxyCommand=x")) { XCTAssertEqual(($0 as? SSHNameError)?.problem, .leadingDash) }
        XCTAssertNoThrow(try SSHHostName("a-"), "a dash elsewhere is fine")
    }

    func testUsersFollowSshsOwnRuleNotTheHostRule() {
        for good in ["deploy", "d.e-p_l", "user@corp", "$USER", "a b", "a,b", "a\\b", "x-"] {
            XCTAssertNoThrow(try SSHUserName(good), good)
        }
        for character in "'`\";&<>|(){}".map(String.init) + ["\n", "\u{01}", "\u{7F}"] {
            XCTAssertThrowsError(try SSHUserName("a\(character)b"), "user with \(character.debugDescription)")
        }
        XCTAssertThrowsError(try SSHUserName("-l")) { XCTAssertEqual(($0 as? SSHNameError)?.problem, .leadingDash) }
        XCTAssertThrowsError(try SSHUserName("a -oX")) { XCTAssertEqual(($0 as? SSHNameError)?.problem, .dashAfterSpace) }
        XCTAssertThrowsError(try SSHUserName("a\\")) { XCTAssertEqual(($0 as? SSHNameError)?.problem, .trailingBackslash) }
    }

    func testTheErrorNamesTheFieldAndTheCharacterAndNeverEchoesControlCharacters() {
        XCTAssertThrowsError(try SSHDestination(name: "web", address: "x;\u{1B}[2J", user: nil)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.hasPrefix("host name \"x;"), text)
            XCTAssertTrue(text.contains("contains ';', which ssh refuses (hostname contains invalid characters)"), text)
            XCTAssertFalse(text.contains("\u{1B}"), text)
        }
        XCTAssertThrowsError(try SSHDestination(name: "web", address: "h", user: "a\nb")) { error in
            XCTAssertTrue("\(error)".contains("user \"a"), "\(error)")
            XCTAssertTrue("\(error)".contains("contains a newline, which ssh refuses (remote username contains invalid characters)"), "\(error)")
        }
    }

    func testAnInventoryHostWithAnUnsafeValueIsRefusedAtStageProxyWithItsLocation() throws {
        var host = InventoryHost(name: "web", address: "10.0.0.5", user: "x`id`", source: SourceLocation(file: "hosts.ini", line: 7))
        let refusal = try XCTUnwrap(host.refusal)
        XCTAssertEqual(refusal.code, .unsafeName)
        XCTAssertEqual(refusal.failure.stage, .proxy)
        XCTAssertTrue(refusal.failure.message.value.hasPrefix("hosts.ini:7: its user \"x`id`\" contains '`'"), refusal.failure.message.value)
        XCTAssertTrue(refusal.failure.message.value.hasSuffix("; not probed, and nothing is run for it"))
        host.user = "ops"
        XCTAssertNil(host.refusal)
        host.endpoint = .tls(TLSEndpoint(serverName: nil))
        host.name = "a;b:443/tls"
        XCTAssertEqual(host.refusal?.reason, .noCertificateName("a;b"), "no certificate can carry the name: refused, never checked against the address")
        host.name = "10.0.0.5:443/tls"
        XCTAssertNil(host.refusal, "an IP literal is a name a certificate can carry")
    }
}
