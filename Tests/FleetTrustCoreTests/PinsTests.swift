import Foundation
import XCTest
@testable import FleetTrustCore

final class PinsTests: XCTestCase {
    let a = TestKeys.a, b = TestKeys.b

    func pins(_ text: String) throws -> PinSet { try PinSet.parse(path: "pins", bytes: Array(text.utf8)) }

    func testFingerprintsWithoutPrefixOrWithPaddingAreNormalised() throws {
        let bare = String(a.sha256Fingerprint.dropFirst(7))
        let set = try pins("# team pins\nweb,*.db.example \(bare)= \(b.sha256Fingerprint)\n")
        XCTAssertEqual(set.lines[0].fingerprints, [a.sha256Fingerprint, b.sha256Fingerprint])
        XCTAssertEqual(set.lines[0].number, 2)
    }

    func testErrorsNameFileAndLine() {
        XCTAssertThrowsError(try pins("ok \(a.sha256Fingerprint)\nweb SHA256:nope\n")) { error in
            XCTAssertEqual((error as? PinFileError)?.line, 2)
            XCTAssertTrue("\(error)".hasPrefix("pins:2: "))
        }
        XCTAssertThrowsError(try pins("web\n"))
        XCTAssertThrowsError(try pins("web \(a.sha256Fingerprint) expires=2027-02-30\n"))
        XCTAssertThrowsError(try pins("web expires=2027-01-01 \(a.sha256Fingerprint)\n"))
    }

    func testPinSetMatchesAnyPinnedKeyAndMismatchesOtherwise() throws {
        let set = try pins("web \(a.sha256Fingerprint) \(b.sha256Fingerprint)\n")
        let lookup = LookupName(host: "WEB", port: 2222)
        XCTAssertEqual(PinJudgement.judge(keys: [TestKeys.c, b], lookup: lookup, pins: set, mode: .enforce).verdict, .matched)
        XCTAssertEqual(PinJudgement.judge(keys: [TestKeys.c], lookup: lookup, pins: set, mode: .enforce).verdict, .mismatch)
        XCTAssertEqual(PinJudgement.judge(keys: [TestKeys.c], lookup: lookup, pins: set, mode: .report).verdict, .reportedMismatch)
        XCTAssertEqual(PinJudgement.judge(keys: [TestKeys.c], lookup: LookupName(host: "db"), pins: set, mode: .enforce).verdict, .unpinned)
    }

    func testExpiredPinsNoLongerBind() throws {
        let set = try pins("web \(a.sha256Fingerprint) expires=2027-01-31\n")
        let lastSecond: UInt64 = 1_801_439_999, after: UInt64 = 1_801_440_000
        XCTAssertEqual(PinJudgement.judge(keys: [b], lookup: LookupName(host: "web"), pins: set, mode: .enforce, now: lastSecond).verdict, .mismatch)
        XCTAssertEqual(PinJudgement.judge(keys: [b], lookup: LookupName(host: "web"), pins: set, mode: .enforce, now: after).verdict, .expired)
    }

    func testPinMismatchMakesTheHostPinMismatchWhateverKnownHostsSays() throws {
        let set = try pins("web \(b.sha256Fingerprint)\n")
        let known = KnownHosts(files: [TestKeys.file("web \(a.openSSHLine)\n")])
        let assessment = try HostAssessment.assess(keys: [a], target: ConnectionTarget(host: "web"), knownHosts: known, pins: set)
        XCTAssertEqual(assessment.status, .pinMismatch)
        XCTAssertEqual(try HostAssessment.assess(keys: [a], target: ConnectionTarget(host: "web"), knownHosts: known,
                                                 pins: set, pinMode: .report).status, .trusted)
    }

    func testPinWriterAppendsAndRefusesAConcurrentChangeForThePatterns() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ft-pins-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = FileManager.default.createFile(atPath: path, contents: Data("# pins\nweb \(a.sha256Fingerprint)".utf8))
        let before = [UInt8](FileManager.default.contents(atPath: path)!)
        let writer = PinFileWriter(path: path)
        try writer.addPin(patterns: "db", fingerprints: [String(b.sha256Fingerprint.dropFirst(7))], expires: "2030-01-01", basedOn: before)
        XCTAssertEqual(String(decoding: FileManager.default.contents(atPath: path)!, as: UTF8.self),
                       "# pins\nweb \(a.sha256Fingerprint)\ndb \(b.sha256Fingerprint) expires=2030-01-01\n")
        XCTAssertThrowsError(try writer.addPin(patterns: "db", fingerprints: [a.sha256Fingerprint], basedOn: before))
        XCTAssertNoThrow(try writer.addPin(patterns: "other", fingerprints: [a.sha256Fingerprint], basedOn: before))
    }
}
