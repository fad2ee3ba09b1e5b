import XCTest
@testable import FleetTrustSSH

final class ProbeTargetTests: XCTestCase {
    func testTargetFormsParseToHostAndPort() throws {
        let cases: [(String, String, Int)] = [
            ("example.org", "example.org", 22),
            ("example.org:2222", "example.org", 2222),
            ("[example.org]:2222", "example.org", 2222),
            ("[::1]:2200", "::1", 2200),
            ("[::1]", "::1", 22),
            ("2001:db8::7", "2001:db8::7", 22),
            ("127.0.0.1:1", "127.0.0.1", 1),
        ]
        for (text, host, port) in cases {
            let target = try ProbeTarget(parsing: text)
            XCTAssertEqual(target.host, host, text)
            XCTAssertEqual(target.port, port, text)
        }
    }

    func testMalformedTargetsAreRejectedWithTheReason() {
        for text in ["", ":22", "host:0", "host:65536", "host:22x", "[::1", "[::1]2200", "a:b:c", "two words", "h/x"] {
            XCTAssertThrowsError(try ProbeTarget(parsing: text), text) { error in
                XCTAssertTrue("\(error)".contains("bad target"), text)
            }
        }
    }
}
