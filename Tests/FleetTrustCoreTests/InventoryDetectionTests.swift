import XCTest
@testable import FleetTrustCore

final class InventoryDetectionTests: XCTestCase {
    func testFixturesAreDetectedFromTheirContent() throws {
        let expected: [(String, InventoryFormat)] = [
            ("plain.txt", .plain), ("hosts.ini", .ansibleINI), ("inventory.yml", .ansibleYAML),
            ("ssh_config", .sshConfig), ("broken.ini", .ansibleINI),
        ]
        for (name, format) in expected {
            let contents = String(decoding: try InventoryFixtures.source(name).bytes, as: UTF8.self)
            XCTAssertEqual(InventoryFormat.detect(contents), format, name)
        }
    }

    func testShortSamplesAreDetected() {
        XCTAssertEqual(InventoryFormat.detect("# fleet\n127.0.0.1:2201\n[::1]:2202\n"), .plain)
        XCTAssertEqual(InventoryFormat.detect("web1 ansible_host=10.0.0.1\n"), .ansibleINI)
        XCTAssertEqual(InventoryFormat.detect("all:\n  hosts:\n    a:\n"), .ansibleYAML)
        XCTAssertEqual(InventoryFormat.detect("---\nall: {}\n"), .ansibleYAML)
        XCTAssertEqual(InventoryFormat.detect("  # comment\nhostname=x\n"), .sshConfig)
        XCTAssertEqual(InventoryFormat.detect("IdentityFile ~/.ssh/id\nHost a\n"), .sshConfig)
        XCTAssertEqual(InventoryFormat.detect(""), .plain)
    }

    func testFormatArgumentNames() {
        XCTAssertEqual(InventoryFormat(argument: "ssh_config"), .sshConfig)
        XCTAssertEqual(InventoryFormat(argument: "YAML"), .ansibleYAML)
        XCTAssertEqual(InventoryFormat(argument: "ini"), .ansibleINI)
        XCTAssertEqual(InventoryFormat(argument: "plain"), .plain)
        XCTAssertNil(InventoryFormat(argument: "toml"))
    }

    func testOverrideBeatsDetection() {
        let inventory = InventoryFixtures.read(text: "Host a\n", format: .plain)
        XCTAssertEqual(inventory.hosts, [])
        XCTAssertEqual(inventory.errors.count, 1, "read as a plain list, 'Host a' is two words")
    }

    func testSeveralSourcesIncludingStandardInputMergeIntoOneInventory() throws {
        let stdin = InventorySource(name: "<stdin>", contents: "[extra]\nweb01.example.com\nnew.example.com\n")
        let inventory = Inventory.read([try InventoryFixtures.source("hosts.ini"), stdin,
                                        try InventoryFixtures.source("plain.txt")], options: InventoryFixtures.options)
        XCTAssertEqual(inventory.hosts.count, 13 + 1 + 8)
        XCTAssertEqual(Set(inventory["web01.example.com"]!.groups), ["web", "cache", "extra"])
        XCTAssertTrue(inventory.groupNames.contains("extra"))
        XCTAssertEqual(inventory["new.example.com"]?.source?.file, "<stdin>")
    }

    func testConflictingDefinitionsAcrossFilesAreReported() {
        let inventory = Inventory.read([InventorySource(name: "a", contents: "h.example.com\n"),
                                        InventorySource(name: "b", contents: "h.example.com\n"),
                                        InventorySource(name: "c", contents: "[g]\nh.example.com ansible_user=x\n")],
                                       options: InventoryFixtures.options)
        XCTAssertEqual(inventory.hosts.count, 1)
        XCTAssertEqual(inventory.hosts[0].groups, ["g"])
        XCTAssertEqual(inventory.diagnostics.map(\.location), [SourceLocation(file: "c", line: 2)])
    }
}
