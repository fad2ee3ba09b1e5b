import XCTest
@testable import FleetTrustCore

final class KnownHostsParserTests: XCTestCase {
    func testMarkerEndsAtFirstSpaceSoATabBeforeASpaceMakesTheLineInvalid() {
        let a = TestKeys.a
        let file = TestKeys.file("""
            @revoked\thost \(a.openSSHLine)
            @revoked\thost\t\(a.type)\t\(a.base64)
            @REVOKED host \(a.openSSHLine)
            @revoked @cert-authority host \(a.openSSHLine)

            """)
        guard case .invalid = file.lines[0].content else { return XCTFail("tab then space must be invalid") }
        XCTAssertEqual(file.lines[1].entry?.marker, .revoked)
        guard case .invalid = file.lines[2].content else { return XCTFail("markers are case-sensitive") }
        guard case .invalid = file.lines[3].content else { return XCTFail("two markers are invalid") }
    }

    func testCommentsBlankLinesAndHashInsideHostField() {
        let file = TestKeys.file("# c\n   \n\t# c\nfoo#x \(TestKeys.a.openSSHLine)\n")
        XCTAssertEqual(file.lines.map { $0.entry == nil }, [true, true, true, false])
        XCTAssertEqual(file.matchingLines("foo#x"), [3])
    }

    func testCRLFLinesAndNulAfterKeyStillParse() {
        let file = KnownHostsFile(path: "kh", bytes: Array("h \(TestKeys.a.openSSHLine)\r\n".utf8) + Array("g \(TestKeys.a.openSSHLine)".utf8) + [0] + Array("junk\n".utf8))
        XCTAssertEqual(file.lines[0].entry?.key, .key(TestKeys.a))
        XCTAssertEqual(file.lines[1].entry?.key, .key(TestKeys.a))
        XCTAssertEqual(file.lines[1].raw.last, UInt8(ascii: "k"), "the raw bytes keep everything after the NUL")
    }

    func testInvalidKeysAreIgnoredAndKeepTheirLineNumbers() {
        let file = TestKeys.file("""
            h ssh-rsa \(TestKeys.a.base64)
            h ssh-ed25519
            h ssh-ed25519 \(TestKeys.a.base64.replacingOccurrences(of: "=", with: ""))X
            h SSH-ED25519 \(TestKeys.a.base64)
            h
            h \(TestKeys.b.openSSHLine)

            """)
        XCTAssertEqual(file.lines.compactMap { $0.entry == nil ? nil : $0.number }, [6])
    }

    func testBase64FollowsOpenSSHRules() {
        XCTAssertEqual(OpenSSHBase64.decode(Array("QQ==".utf8)), [0x41])
        XCTAssertNil(OpenSSHBase64.decode(Array("QQ".utf8)), "padding is required")
        XCTAssertNil(OpenSSHBase64.decode(Array("QR==".utf8)), "non-zero padding bits are refused")
        XCTAssertEqual(OpenSSHBase64.decode(Array("Q\rQ=\r=".utf8)), [0x41], "whitespace is skipped anywhere")
        XCTAssertNil(OpenSSHBase64.decode(Array("QQ==x".utf8)))
    }

    func testHashedFieldsWithBadMagicOrSaltAreInvalid() throws {
        let good = try HashedHostName(hashing: "h").field
        let file = TestKeys.file("""
            \(good) \(TestKeys.a.openSSHLine)
            |2|\(good.dropFirst(3)) \(TestKeys.a.openSSHLine)
            |1|c2hvcnQ=|\(good.suffix(28)) \(TestKeys.a.openSSHLine)
            |1|nosalt \(TestKeys.a.openSSHLine)

            """)
        XCTAssertNotNil(file.lines[0].entry)
        XCTAssertEqual(file.lines.dropFirst().map { $0.entry == nil }, [true, true, true])
    }

    func testFiftyThousandLinesParseOnceAndIndexLiteralNames() throws {
        var text = ""
        for i in 0..<25_000 {
            text += "host\(i).example,10.0.\(i / 256).\(i % 256) \(TestKeys.a.openSSHLine)\n"
            text += "\(try HashedHostName(hashing: "hashed\(i).example").field) \(TestKeys.b.openSSHLine)\n"
        }
        let file = TestKeys.file(text)
        XCTAssertEqual(file.lines.count, 50_000)
        XCTAssertEqual(file.literalIndex.count, 50_000)
        XCTAssertEqual(file.hashedLines.count, 25_000)
        XCTAssertEqual(file.matchingLines("host777.example"), [1554])
        XCTAssertEqual(file.matchingLines("hashed4.example"), [9])
    }
}
