import XCTest
@testable import FleetTrustCore

/// `ansible-inventory --list` JSON: the shapes the script plugin accepts, and detection.
final class InventoryJSONTests: XCTestCase {
    private let listed = """
    {
        "_meta": {
            "hostvars": {
                "web1": {"ansible_host": "127.0.0.11", "ansible_port": 2201, "ansible_user": "deploy"},
                "db1": {"ansible_ssh_host": "127.0.0.12", "fleettrust_policy": "pinned"},
                "stray": {"ansible_host": "127.0.0.99"}
            },
            "profile": "inventory_legacy"
        },
        "all": {"children": ["ungrouped", "prod"]},
        "prod": {"children": ["web", "db"], "vars": {"ansible_user": "produser"}},
        "web": {"hosts": ["web1"]},
        "db": {"hosts": ["db1"]},
        "ungrouped": {"hosts": ["lone"]}
    }
    """

    func testListOutputGivesHostsGroupsAndVariables() {
        let inventory = InventoryFixtures.read(text: listed, name: "list.json")
        XCTAssertEqual(inventory.errors, [])
        XCTAssertEqual(inventory.endpoints, ["web1": "deploy@127.0.0.11:2201", "db1": "produser@127.0.0.12:22", "lone": "lone:22"],
                       "hostvars win over group vars; a host only in _meta is not a host")
        XCTAssertEqual(inventory["db1"]?.policy, "pinned")
        XCTAssertEqual(inventory["web1"]?.groups, ["web"])
        XCTAssertEqual(inventory["web1"]?.inheritedGroups, ["prod"])
        XCTAssertEqual(inventory["lone"]?.groups, ["ungrouped"])
        XCTAssertEqual(inventory["web1"]?.format, .ansibleJSON)
        XCTAssertEqual(inventory["web1"]?.source, SourceLocation(file: "list.json", line: 12))
    }

    func testDetectedFromALeadingBraceAndNamedOnTheCommandLine() {
        XCTAssertEqual(InventoryFormat.detect("\n  {\"all\": {}}"), .ansibleJSON)
        XCTAssertEqual(InventoryFormat.detect("\u{FEFF}{}"), .ansibleJSON)
        XCTAssertEqual(InventoryFormat(argument: "json"), .ansibleJSON)
        XCTAssertEqual(InventoryFormat(argument: "ansible-inventory"), .ansibleJSON)
    }

    func testScriptShortFormsAreReadAsTheScriptPluginReadsThem() {
        let text = #"{"web": ["w1", "w2"], "solo": {"ansible_host": "127.0.0.7"}, "db": {"hosts": ["d1"], "vars": {"ansible_port": "2300"}}}"#
        let inventory = InventoryFixtures.read(text: text, format: .ansibleJSON)
        XCTAssertEqual(inventory.errors, [])
        XCTAssertEqual(inventory.endpoints, ["w1": "w1:22", "w2": "w2:22", "solo": "127.0.0.7:22", "d1": "d1:2300"],
                       "a list is the group's hosts; a mapping without hosts, vars or children is a host named like the group")
    }

    func testHostNamesAreTakenAsWrittenNotAsPatterns() {
        let inventory = InventoryFixtures.read(text: #"{"g": {"hosts": ["web[1:3]", "h:2222"]}}"#)
        XCTAssertEqual(inventory.hosts.map(\.name), ["web[1:3]", "h:2222"])
        XCTAssertEqual(inventory.hosts.map(\.port), [22, 22])
    }

    func testAJSONFileShapedAsAYAMLInventoryIsReadAsOne() {
        let text = #"{"all": {"hosts": {"a": {"ansible_port": 2201}}, "children": {"web": {"hosts": {"w[1:2]": null}}}}}"#
        XCTAssertEqual(InventoryFixtures.read(text: text).endpoints, ["a": "a:2201", "w1": "w1:22", "w2": "w2:22"])
        let forced = InventoryFixtures.read(text: text, format: .ansibleJSON)
        XCTAssertTrue(forced.errors.contains { $0.message.contains("must be a list of names") }, "\(forced.errors)")
    }

    func testMalformedPartsAreReportedByLine() {
        let text = "{\n\"g\": {\"hosts\": \"w1\"},\n\"h\": {\"children\": {\"x\": 1}},\n\"_meta\": []\n}\n"
        let inventory = InventoryFixtures.read(text: text, name: "bad.json")
        XCTAssertEqual(inventory.errors.map(\.location.line), [2, 3, 4])
        let syntax = InventoryFixtures.read(text: "{\"g\": [\"a\",\n}\n", name: "broken.json")
        XCTAssertEqual(syntax.errors.count, 1)
        XCTAssertTrue(syntax.errors[0].message.contains("syntax error"), syntax.errors[0].message)
    }

    func testTabsAndSingleLineOutputAreRead() {
        let text = "{\"g\":\t{\"hosts\":\t[\"a\"]},\t\"_meta\":{\"hostvars\":{\"a\":{\"ansible_user\":\"u\"}}}}"
        XCTAssertEqual(InventoryFixtures.read(text: text).endpoints, ["a": "u@a:22"])
    }
}
