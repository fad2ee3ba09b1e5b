import XCTest
@testable import FleetTrustCore

final class InventoryNamingTests: XCTestCase {
    func testAddressIsLowercasedAndPortFormattedOnlyWhenNot22() {
        XCTAssertEqual(InventoryHost(name: "web", address: "Web.Example.COM").knownHostsName, "web.example.com")
        let host = InventoryHost(name: "web", address: "Web.Example.COM", port: 2222)
        XCTAssertEqual(host.knownHostsHost, "web.example.com")
        XCTAssertEqual(host.knownHostsPort, 2222)
        XCTAssertEqual(host.knownHostsName, "[web.example.com]:2222")
        XCTAssertEqual(InventoryHost(name: "v6", address: "2001:DB8::1", port: 2200).knownHostsName, "[2001:db8::1]:2200")
    }

    func testHostKeyAliasIsUsedVerbatimLowercasedWithoutPort() {
        let host = InventoryHost(name: "db", address: "10.0.0.5", port: 2200, hostKeyAlias: "DB-Primary.example.com",
                                 format: .sshConfig)
        XCTAssertEqual(host.knownHostsHost, "db-primary.example.com")
        XCTAssertNil(host.knownHostsPort)
        XCTAssertEqual(host.knownHostsName, "db-primary.example.com")
        XCTAssertEqual(host.additionalNames, ["db", "10.0.0.5"])
    }

    func testAliasIsExtraEvidenceOnlyWhenItDiffersAndIsAName() throws {
        let inventory = try InventoryFixtures.read("ssh_config")
        XCTAssertEqual(inventory["bastion"]?.knownHostsName, "[bastion.example.com]:2022")
        XCTAssertEqual(inventory["bastion"]?.additionalNames, ["bastion"])
        XCTAssertEqual(inventory["web.example.com"]?.additionalNames, [])
        let plain = InventoryFixtures.read(text: "Box.example.com:2200\n", format: .plain).hosts[0]
        XCTAssertEqual(plain.knownHostsName, "[box.example.com]:2200")
        XCTAssertEqual(plain.additionalNames, [], "a plain line's name is its endpoint, not a host name")
        let ansible = try InventoryFixtures.read("hosts.ini")
        XCTAssertEqual(ansible["db-primary"]?.knownHostsName, "[10.0.0.5]:2201")
        XCTAssertEqual(ansible["db-primary"]?.additionalNames, ["db-primary"])
    }
}
