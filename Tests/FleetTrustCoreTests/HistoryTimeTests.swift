import Foundation
import XCTest
@testable import FleetTrustCore

/// The history's times and a report's dates are written by hand: what Foundation's RFC 3339
/// formatter writes (UTC, to the second) for every time a history can hold, and read back.
final class HistoryTimeTests: XCTestCase {
    func testTimesAreWrittenAsFoundationsFormatterWritesThem() {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        var generator = SystemRandomNumberGenerator()
        let edges: [UInt64] = [0, 999, 1000, 59_999, 951_782_400_000, 1_795_818_551_123, 4_102_444_799_999, HistoryStore.latestTime.magnitude]
        for milliseconds in edges + (0..<2000).map({ _ in UInt64.random(in: 0...HistoryStore.latestTime.magnitude, using: &generator) }) {
            let written = HistoryTime.rfc3339(milliseconds)
            XCTAssertEqual(written, formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds / 1000))), "\(milliseconds)")
            XCTAssertEqual(HistoryTime.date(rfc3339: written), Date(timeIntervalSince1970: Double(milliseconds / 1000)), written)
        }
    }

    func testAYearPastTheHistorysRangeIsStillSpeltInFull() {
        XCTAssertEqual(HistoryTime.rfc3339(253_402_300_800_000), "10000-01-01T00:00:00Z")
    }
}
