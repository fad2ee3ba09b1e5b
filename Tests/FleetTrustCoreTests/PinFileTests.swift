import Foundation
import XCTest
@testable import FleetTrustCore
import FleetTrustTestFleet

/// The pin file format: fields, normalisation, expiry, and file:line errors for bad lines.
final class PinFileTests: XCTestCase {
    static let a = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU"
    static let b = "2TZlvv7K5TZ3YfBJ4XkY0hP8W6b4VnNYYp7hC3zZ7sE"

    func testFingerprintWithoutPrefixOrWithPaddingIsNormalised() throws {
        for input in [Self.a, "SHA256:" + Self.a, "sha256:" + Self.a, Self.a + "=", "SHA256:" + Self.a + "="] {
            XCTAssertEqual(try PinFingerprint.parse(input).get().text, "SHA256:" + Self.a, input)
        }
    }

    func testFingerprintOfWrongLengthCharactersOrTrailingBitsIsRejected() {
        for input in [String(Self.a.dropLast()), Self.a + "A", "SHA256:" + Self.a.replacingOccurrences(of: "+", with: "-"),
                      String(Self.a.dropLast()) + "V", "SHA256:", ""] {
            guard case .failure(.badFingerprint) = PinFingerprint.parse(input) else { return XCTFail(input) }
        }
        guard case .failure(.md5Fingerprint) = PinFingerprint.parse("MD5:16:27:ac:a5:76:28:2d:36:63:1b:56:4d:eb:df:a6:48") else {
            return XCTFail("MD5 accepted")
        }
    }

    func testPinOfARealKeyEqualsWhatSshKeygenPrints() throws {
        let dir = try StoreTestDirectory()
        defer { dir.remove() }
        try Tool.check("/usr/bin/ssh-keygen", ["-q", "-t", "ecdsa", "-N", "", "-f", dir.file("k")])
        let printed = try Tool.check("/usr/bin/ssh-keygen", ["-lf", dir.file("k.pub")]).split(separator: " ")[1]
        let key = try HostKey(openSSHLine: dir.text("k.pub"))
        XCTAssertEqual(try PinFingerprint.parse(printed).get(), PinFingerprint(key: key))
        XCTAssertEqual(try PinFingerprint.parse(printed.dropFirst("SHA256:".count)).get(), PinFingerprint(key: key))
    }

    func testLinesCommentsBlanksCRLFAndTabsAreRead() {
        let text = "# team pins\r\n\r\n  web*.example.com,!web9.example.com\t\(Self.a) SHA256:\(Self.b) expires=2027-02-28\r\n[db.example.com]:2222 \(Self.b)\n   # indented comment\ntrailing \(Self.a)"
        let file = PinFile(path: "pins", bytes: Array(text.utf8))
        XCTAssertEqual(file.errors, [])
        XCTAssertEqual(file.pins.map(\.patterns), ["web*.example.com,!web9.example.com", "[db.example.com]:2222", "trailing"])
        XCTAssertEqual(file.pins.map(\.line), [3, 4, 6])
        XCTAssertEqual(file.pins[0].fingerprints.map(\.text), ["SHA256:" + Self.a, "SHA256:" + Self.b])
        XCTAssertEqual(file.pins[0].expires, PinDate(year: 2027, month: 2, day: 28))
        XCTAssertNil(file.pins[1].expires)
    }

    func testEveryBadLineIsReportedWithFileAndLineAndSkipped() {
        let text = """
        good \(Self.a)
        lonely-pattern
        bad \(Self.a.dropLast())
        md5 MD5:16:27:ac:a5:76:28:2d:36:63:1b:56:4d:eb:df:a6:48
        date \(Self.a) expires=2027-02-29
        twice \(Self.a) expires=2027-01-01 expires=2027-01-02
        ctl \(Self.a)\u{1b}[31m
        only expires=2027-01-01
        alsogood \(Self.b)
        """
        let file = PinFile(path: "team.pins", bytes: Array(text.utf8) + [0x0a, 0x78, 0xff, 0x20] + Array(Self.a.utf8))
        XCTAssertEqual(file.pins.map(\.patterns), ["good", "alsogood"])
        XCTAssertEqual(file.errors.map(\.line), [2, 3, 4, 5, 6, 7, 8, 10])
        XCTAssertEqual(file.errors[0].description, "team.pins:2: a pin needs host patterns and at least one fingerprint")
        XCTAssertTrue(file.errors[1].description.hasPrefix("team.pins:3: not a SHA256 fingerprint"))
        XCTAssertEqual(file.errors[2].reason, .md5Fingerprint)
        XCTAssertEqual(file.errors[3].reason, .badExpiry("expires=2027-02-29"))
        XCTAssertEqual(file.errors[4].reason, .repeatedExpiry)
        XCTAssertEqual(file.errors[5].reason, .controlCharacter)
        XCTAssertEqual(file.errors[7].reason, .notUTF8)
    }

    func testExpiryDatesAreCheckedAsRealDates() {
        XCTAssertEqual(PinDate.parse("2028-02-29"), PinDate(year: 2028, month: 2, day: 29))
        for bad in ["2027-02-29", "2100-02-29", "2027-13-01", "2027-00-10", "2027-1-01", "27-01-01", "2027-01-32", "２０２７-01-01", "+027-01-01"] {
            XCTAssertNil(PinDate.parse(Substring(bad)), bad)
        }
    }

    func testRandomBytesNeverCrashTheParser() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("SHA256:\(Self.a) ,!*?#=expires-2027\r\n\t\u{0}".utf8) + [0xff, 0xc3]
        for _ in 0..<2_000 {
            let count = Int.random(in: 0...300, using: &generator)
            let bytes = (0..<count).map { _ in Bool.random() ? alphabet.randomElement()! : UInt8.random(in: 0...255) }
            let file = PinFile(path: "r", bytes: bytes)
            _ = PinSet(files: [file]).judge(names: ["h"], fingerprints: ["SHA256:" + Self.a], now: Date())
            XCTAssertTrue(file.errors.allSatisfy { $0.line >= 1 })
        }
    }
}
