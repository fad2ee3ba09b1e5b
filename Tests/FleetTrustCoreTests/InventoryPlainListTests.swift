import XCTest
@testable import FleetTrustCore

final class InventoryPlainListTests: XCTestCase {
    func testFixtureReadsEverySpellingOfHostAndPort() throws {
        let inventory = try InventoryFixtures.read("plain.txt", format: .plain)
        XCTAssertEqual(inventory.diagnostics, [])
        XCTAssertEqual(inventory.hosts.map(\.name), [
            "bastion.example.com", "app1.example.com", "app2.example.com:2222", "db1.example.com:2200",
            "[2001:db8::10]:22022", "2001:db8::11", "192.0.2.7", "192.0.2.8:2022",
        ])
        XCTAssertEqual(inventory.hosts.map(\.address), [
            "bastion.example.com", "app1.example.com", "app2.example.com", "db1.example.com",
            "2001:db8::10", "2001:db8::11", "192.0.2.7", "192.0.2.8",
        ])
        XCTAssertEqual(inventory.hosts.map(\.port), [22, 22, 2222, 2200, 22022, 22, 22, 2022])
        XCTAssertEqual(inventory.hosts.map(\.user), [nil, "deploy", nil, "admin", nil, nil, nil, "root"])
        XCTAssertEqual(inventory["app2.example.com:2222"]?.source, SourceLocation(file: "plain.txt", line: 6))
    }

    func testSameAddressOnTwoPortsStaysTwoHosts() {
        let inventory = InventoryFixtures.read(text: "127.0.0.1:2201\n127.0.0.1:2202\n", format: .plain)
        XCTAssertEqual(inventory.hosts.map(\.port), [2201, 2202])
    }

    func testWindowsLineEndingsAreAccepted() {
        let inventory = InventoryFixtures.read(text: "a.example.com\r\nb.example.com:2200\r\n", format: .plain)
        XCTAssertEqual(inventory.hosts.map(\.address), ["a.example.com", "b.example.com"])
        XCTAssertEqual(inventory.diagnostics, [])
    }

    func testEveryBadLineIsReportedWithItsLineAndTheGoodOnesAreKept() {
        let text = """
        good1.example.com
        two hosts.example.com
        bad.example.com:0
        bad.example.com:http
        @nouser.example.com
        1:2:3
        [::1]:99999
        good2.example.com:2200
        """
        let inventory = InventoryFixtures.read(text: text, name: "fleet.txt", format: .plain)
        XCTAssertEqual(inventory.hosts.map(\.name), ["good1.example.com", "good2.example.com:2200"])
        XCTAssertEqual(inventory.errors.map(\.location.line), [2, 3, 4, 5, 6, 7])
        XCTAssertEqual(inventory.skipped, 6)
        XCTAssertEqual(inventory.errors[1].description, "fleet.txt:3: port '0' is not a number from 1 to 65535")
        XCTAssertTrue(inventory.errors[0].description.hasPrefix("fleet.txt:2: expected one host per line"))
    }
}
