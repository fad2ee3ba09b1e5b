import XCTest
@testable import FleetTrustSSH

/// `discover`'s targets, read as `ssh-keyscan` reads them: `ADDRLIST [NAMELIST]`, `#` comments,
/// names without a port taking the port of the address that answered.
final class KeyscanTargetTests: XCTestCase {
    func testAddressesAndNamesAreCommaListsAndNamesTakeTheAnsweringPort() throws {
        let target = try XCTUnwrap(try KeyscanTarget.parse("10.0.0.1:2201,[10.0.0.2]:2202 web1,[web]:2222 # the web pair", defaultPort: 22))
        XCTAssertEqual(target.addresses.map(\.host), ["10.0.0.1", "10.0.0.2"])
        XCTAssertEqual(target.addresses.map(\.port), [2201, 2202])
        XCTAssertEqual(target.lookupNames(answeredBy: target.addresses[1]), ["[web1]:2202", "[web]:2222"])
        let bare = try XCTUnwrap(try KeyscanTarget.parse("db", defaultPort: 22))
        XCTAssertEqual(bare.lookupNames(answeredBy: bare.addresses[0]), ["db"])
        XCTAssertNil(try KeyscanTarget.parse("   # only a comment", defaultPort: 22))
    }

    func testBadElementsAreRefusedWithTheirPlaceAndAFileKeepsItsGoodLines() {
        XCTAssertThrowsError(try KeyscanTarget.parse("a,,b", defaultPort: 22)) { error in
            XCTAssertTrue("\(error)".contains("empty name"), "\(error)")
        }
        XCTAssertThrowsError(try KeyscanTarget.parse("10.0.0.0/24", defaultPort: 22)) { error in
            XCTAssertTrue("\(error)".contains("CIDR"), "\(error)")
        }
        let read = KeyscanTarget.read("good\n10.0.0.0/8\n\n[x\nother:2200\n", file: "targets", defaultPort: 22)
        XCTAssertEqual(read.targets.map { $0.addresses[0].host }, ["good", "other"])
        XCTAssertEqual(read.errors.map(\.place), ["targets:2: ", "targets:4: "])
    }
}
