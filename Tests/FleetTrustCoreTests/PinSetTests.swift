import Foundation
import XCTest
@testable import FleetTrustCore

/// Judging presented keys against pins: sets, rotation, negation, expiry, report mode.
final class PinSetTests: XCTestCase {
    static let a = "SHA256:" + PinFileTests.a, b = "SHA256:" + PinFileTests.b
    static let c = "SHA256:" + String(repeating: "A", count: 43)
    static let day: TimeInterval = 86_400
    /// 2027-03-01 12:00 UTC.
    static let march1 = Date(timeIntervalSince1970: 1_803_859_200 + 12 * 3_600)

    func pins(_ text: String, mode: PinSet.Mode = .enforce) -> PinSet {
        let file = PinFile(path: "pins", bytes: Array(text.utf8))
        XCTAssertEqual(file.errors, [])
        return PinSet(files: [file], mode: mode)
    }

    func testDayNumbersAgreeWithTheCalendar() {
        XCTAssertEqual(PinDate(year: 1970, month: 1, day: 1).dayNumber, 0)
        XCTAssertEqual(PinDate(year: 1969, month: 12, day: 31).dayNumber, -1)
        XCTAssertEqual(PinDate(year: 2000, month: 3, day: 1).dayNumber, 11_017)
        XCTAssertEqual(PinDate(year: 2024, month: 2, day: 29).dayNumber, 19_782)
        XCTAssertEqual(PinDate(year: 2027, month: 3, day: 1).dayNumber, Int(Self.march1.timeIntervalSince1970 / Self.day))
    }

    func testHostWithoutPinsIsUnpinned() {
        let judgement = pins("web1 \(Self.a)\n").judge(names: ["web2"], fingerprints: [Self.b], now: Self.march1)
        XCTAssertEqual(judgement, PinJudgement(verdict: .unpinned, evidence: []))
    }

    func testAnyKeyOfTheRotationSetMatchesAcrossLines() {
        let set = pins("web* \(Self.a)\nweb1,web2 \(Self.b)\n")
        let current = set.judge(names: ["web1"], fingerprints: [Self.a], now: Self.march1)
        XCTAssertEqual(current.verdict, .matched)
        XCTAssertEqual(current.locations, ["pins:1"])
        let next = set.judge(names: ["WEB2"], fingerprints: [Self.c, Self.b], now: Self.march1)
        XCTAssertEqual(next.verdict, .matched)
        XCTAssertEqual(next.locations, ["pins:2"])
    }

    func testKeyOutsideTheSetIsAMismatchNamingEveryBindingPin() {
        let judgement = pins("web* \(Self.a)\nweb1 \(Self.b)\n").judge(names: ["web1"], fingerprints: [Self.c], now: Self.march1)
        XCTAssertEqual(judgement.verdict, .mismatch)
        XCTAssertEqual(judgement.locations, ["pins:1", "pins:2"])
        XCTAssertEqual(judgement.acceptedFingerprints.map(\.text), [Self.a, Self.b])
    }

    func testReportModeReportsTheMismatchWithoutFailingIt() {
        let judgement = pins("web1 \(Self.a)\n", mode: .report).judge(names: ["web1"], fingerprints: [Self.c], now: Self.march1)
        XCTAssertEqual(judgement.verdict, .reportedMismatch)
        XCTAssertEqual(pins("web1 \(Self.a)\n", mode: .report).judge(names: ["web1"], fingerprints: [Self.a], now: Self.march1).verdict, .matched)
    }

    func testNegatedPatternTakesTheHostOutOfThePin() {
        let set = pins("*.example.com,!db.example.com \(Self.a)\n")
        XCTAssertEqual(set.judge(names: ["db.example.com"], fingerprints: [Self.c], now: Self.march1).verdict, .unpinned)
        XCTAssertEqual(set.judge(names: ["web.example.com"], fingerprints: [Self.c], now: Self.march1).verdict, .mismatch)
    }

    func testPortFormNamesMatchOnlyBracketedPatterns() {
        let set = pins("[10.0.0.1]:2222 \(Self.a)\n")
        XCTAssertEqual(set.judge(names: ["[10.0.0.1]:2222"], fingerprints: [Self.c], now: Self.march1).verdict, .mismatch)
        XCTAssertEqual(set.judge(names: ["10.0.0.1"], fingerprints: [Self.c], now: Self.march1).verdict, .unpinned)
    }

    func testPinBindsThroughItsExpiryDayAndNotAfter() {
        let set = pins("web1 \(Self.a) expires=2027-03-01\n")
        XCTAssertEqual(set.judge(names: ["web1"], fingerprints: [Self.c], now: Self.march1).verdict, .mismatch)
        let next = set.judge(names: ["web1"], fingerprints: [Self.c], now: Self.march1 + Self.day / 2)
        XCTAssertEqual(next.verdict, .expired)
        XCTAssertEqual(next.locations, ["pins:1"])
    }

    func testExpiredPinDoesNotBindWhileAnotherPinStillDoes() {
        let set = pins("web1 \(Self.a) expires=2027-01-01\nweb1 \(Self.b)\n")
        XCTAssertEqual(set.judge(names: ["web1"], fingerprints: [Self.a], now: Self.march1).verdict, .mismatch)
        XCTAssertEqual(set.judge(names: ["web1"], fingerprints: [Self.b], now: Self.march1).verdict, .matched)
    }

    func testUnparsablePresentedFingerprintsNeverMatch() {
        let set = pins("web1 \(Self.a)\n")
        XCTAssertEqual(set.judge(names: ["web1"], fingerprints: ["garbage", ""], now: Self.march1).verdict, .mismatch)
        XCTAssertEqual(set.judge(names: ["web1"], fingerprints: [String(Self.a.dropFirst(7))], now: Self.march1).verdict, .matched)
    }
}
