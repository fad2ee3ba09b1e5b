import XCTest
@testable import FleetTrustCore

/// Every count in a message agrees with its noun.
final class CountedTests: XCTestCase {
    func testOneTakesTheSingularAndEveryOtherCountThePlural() {
        XCTAssertEqual(Counted.of(1, "host"), "1 host")
        XCTAssertEqual(Counted.of(0, "host"), "0 hosts")
        XCTAssertEqual(Counted.of(2, "known_hosts line"), "2 known_hosts lines")
        XCTAssertEqual(Counted.of(1, "inventory entry", "inventory entries"), "1 inventory entry")
        XCTAssertEqual(Counted.of(3, "inventory entry", "inventory entries"), "3 inventory entries")
    }
}
