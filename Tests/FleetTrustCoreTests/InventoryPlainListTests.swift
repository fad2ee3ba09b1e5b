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

    func testJunkThatIsNoHostIsRefusedWithItsLineBeforeAnythingIsProbed() {
        let junk = ["web1,10.0.0.1", "[::1", "user@@host.example.com", "a@b@host.example.com", "-oProxyCommand=x", "web1;reboot",
                    "host.example.com]:22", "web1|tee"]
        let inventory = InventoryFixtures.read(text: (["ok.example.com"] + junk + ["deploy@ok2.example.com:2200", "2001:db8::1"])
            .joined(separator: "\n") + "\n", format: .plain)
        XCTAssertEqual(inventory.hosts.map(\.name), ["ok.example.com", "ok2.example.com:2200", "2001:db8::1"])
        XCTAssertEqual(inventory.errors.map(\.location.line), Array(2...(junk.count + 1)), "\(inventory.diagnostics)")
        XCTAssertTrue(inventory.errors[0].message.contains("'web1,10.0.0.1' is not [user@]host[:port]"), inventory.errors[0].message)
    }

    func testAGuessedFormatIsNamedBesideTheErrorsItExplains() {
        let guessed = InventoryFixtures.read(text: "web1.example.com\nhost:\n")
        let note = guessed.diagnostics.first { $0.severity == .warning }
        XCTAssertTrue(note?.message.hasPrefix("read as an Ansible YAML inventory (detected from its content;") == true, "\(guessed.diagnostics)")
        let chosen = InventoryFixtures.read(text: "web1.example.com\nhost:\n", format: .plain)
        XCTAssertFalse(chosen.diagnostics.contains { $0.message.contains("detected") }, "\(chosen.diagnostics)")
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
