import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// fleettrust reads inventories as Ansible does: for the same input, the hosts, addresses,
/// ports, users and groups fleettrust finds are those the real `ansible-inventory --list` gives.
final class AnsibleInventoryParityTests: XCTestCase {
    private var root: String!

    override func setUpWithError() throws {
        _ = try AnsibleInventoryOracle.executable()
        root = NSTemporaryDirectory() + "ft-parity-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    override func tearDown() {
        if let root { try? FileManager.default.removeItem(atPath: root) }
    }

    override class func tearDown() {
        if let version = try? AnsibleInventoryOracle.version() { print("compared against \(version)") }
        AnsibleInventoryOracle.removeScratch()
    }

    private func write(_ files: [String: String], executables: [String: String] = [:]) throws {
        let all = files.map { (path: $0.key, text: $0.value, executable: false) }
            + executables.map { (path: $0.key, text: $0.value, executable: true) }
        for entry in all {
            let path = root + "/" + entry.path
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(entry.text.utf8).write(to: URL(fileURLWithPath: path))
            chmod(path, entry.executable ? 0o755 : 0o644)
        }
    }

    /// Loads `relative` with fleettrust and with `ansible-inventory`, and asserts they agree.
    @discardableResult
    private func assertSameAsAnsible(_ relative: String = "", file: StaticString = #filePath, line: UInt = #line) throws -> Inventory {
        let path = relative.isEmpty ? root! : root + "/" + relative
        let listing = try AnsibleInventoryOracle.list(path)
        let inventory = try InventoryLoader().loadWaiting([path])
        XCTAssertFalse(listing.endpoints.isEmpty, "ansible found no host: \(listing.warnings)", file: file, line: line)
        XCTAssertEqual(inventory.ansibleEndpoints, listing.endpoints, "hosts, addresses, ports and users", file: file, line: line)
        XCTAssertEqual(inventory.ansibleGroups, listing.groups, "groups", file: file, line: line)
        XCTAssertEqual(inventory.errors, [], file: file, line: line)
        return inventory
    }

    func testDirectoryOfINIAndYAMLFilesWithVarsFilesAgrees() throws {
        try write([
            "hosts": "[web]\nweb1 ansible_host=127.0.0.31\nweb2:2202\n[db]\ndb1\n[prod:children]\nweb\ndb\n[prod:vars]\nansible_user=prod\n",
            "cloud.yml": "all:\n  children:\n    cache:\n      hosts:\n        cache[1:3]:\n          ansible_port: 2300\n    web:\n      hosts:\n        web3:\n",
            "extra/more.ini": "[db]\ndb2 ansible_user=dba\n",
            "hosts.retry": "[web]\nretried\n", "notes.txt": "noted\n", ".hidden": "hidden\n", "hosts~": "backup\n",
            "ansible.cfg": "[defaults]\n", "README.md": "# readme\n",
            "group_vars/all.yml": "ansible_user: everyone\n",
            "group_vars/web.yml": "ansible_host: 127.0.0.30\nansible_port: 2201\n",
            "host_vars/web2.yml": "ansible_user: web2user\n",
            "host_vars/db1.json": "{\"ansible_host\": \"127.0.0.41\", \"ansible_port\": 2401}\n",
        ])
        let inventory = try assertSameAsAnsible()
        XCTAssertEqual(inventory.hosts.count, 8, "the ignored files add no host")
    }

    /// `--inventory A --inventory B` is one inventory, as `ansible-inventory -i A -i B` builds it:
    /// groups merge, and B's inventory variables and `group_vars/`/`host_vars/` beat A's.
    func testSeveralInventoriesMergeAsAnsibleMergesItsSources() throws {
        try write([
            "a/hosts": "[web]\nweb1 ansible_host=127.0.0.11\nweb2\n[db]\ndb1 ansible_port=2001\n",
            "a/group_vars/web.yml": "ansible_user: from-a\nansible_port: 2100\n",
            "a/host_vars/web2.yml": "ansible_host: 127.0.0.12\n",
            "b/hosts.yml": "all:\n  children:\n    web:\n      hosts:\n        web1:\n          ansible_host: 127.0.0.21\n        web3:\n    prod:\n      children:\n        web:\n        db:\n",
            "b/group_vars/web.yml": "ansible_user: from-b\n",
            "b/host_vars/web2.yml": "ansible_host: 127.0.0.22\n",
            "c.ini": "[db]\ndb1 ansible_port=2002\n",
        ])
        let sources = [root + "/a", root + "/b/hosts.yml", root + "/c.ini"]
        let listing = try AnsibleInventoryOracle.list(sources[0], sources[1], sources[2])
        let inventory = try InventoryLoader().loadWaiting(sources)
        XCTAssertEqual(inventory.ansibleEndpoints, listing.endpoints, "hosts, addresses, ports and users")
        XCTAssertEqual(inventory.ansibleGroups, listing.groups, "groups")
        XCTAssertEqual(inventory.errors, [])
        XCTAssertEqual(listing.endpoints["web1"], "from-b@127.0.0.21:2100", "the later source wins, variable by variable")
        XCTAssertEqual(listing.endpoints["db1"], "db1:2002")
    }

    func testVarsFilesAsDirectoriesAgree() throws {
        try write([
            "inventory.ini": "[web]\nw1\nw2\n[app]\na1\n",
            "group_vars/web/10-connection.yml": "ansible_port: 2210\nansible_user: first\n",
            "group_vars/web/20-user.yaml": "ansible_user: second\n",
            "group_vars/web/nested/30-host": "ansible_host: 127.0.0.50\n",
            "group_vars/web/nested.d/ignored.yml": "ansible_port: 9\n",
            "group_vars/web/.hidden.yml": "ansible_port: 9\n",
            "group_vars/web/backup.yml~": "ansible_port: 9\n",
            "group_vars/web/notes.txt": "ansible_port: 9\n",
            "group_vars/web.yml": "ansible_port: 9\n",
            "group_vars/app": "ansible_user: from-bare-name\n",
            "group_vars/app.yml": "ansible_user: shadowed\n",
            "host_vars/w2/port.json": "{\"ansible_port\": 2222}\n",
        ])
        try assertSameAsAnsible()
    }

    func testPrecedenceConflictsAgree() throws {
        try write([
            "hosts": """
            [all:vars]
            ansible_user=inv_all
            ansible_port=1001
            [parent:vars]
            ansible_user=inv_parent
            ansible_port=1002
            [child:vars]
            ansible_user=inv_child
            ansible_ssh_host=127.0.0.60
            [parent:children]
            child
            [child]
            c1
            c2 ansible_user=inv_host
            c3 ansible_user=inv_host ansible_host=127.0.0.61
            [parent]
            p1
            [zeta]
            both
            [alpha]
            both
            [alpha:vars]
            ansible_user=alpha
            [zeta:vars]
            ansible_user=zeta
            [low]
            prio
            [high]
            prio
            [low:vars]
            ansible_user=low
            [high:vars]
            ansible_user=high
            ansible_group_priority=5
            """,
            "group_vars/all.yml": "ansible_port: 2001\n",
            "group_vars/parent.yml": "ansible_host: 127.0.0.70\n",
            "group_vars/child.yml": "ansible_host: 127.0.0.71\n",
            "group_vars/alpha.yml": "ansible_port: 2100\n",
            "group_vars/zeta.yml": "ansible_port: 2200\n",
            "host_vars/c3.yml": "ansible_user: hv\n",
        ])
        let inventory = try assertSameAsAnsible()
        XCTAssertEqual(inventory.hosts.first { $0.name == "prio" }?.user, "high", "the test covers priority")
    }

    func testDynamicScriptsAgree() throws {
        let listing = #"{"cloud": {"hosts": ["vm1", "vm2"], "vars": {"ansible_user": "cloud"}}, "_meta": {"hostvars": {"vm1": {"ansible_host": "127.0.0.81", "ansible_port": 2281}}}}"#
        try write(["dir/static.ini": "[cloud]\nvm3\n[prod:children]\ncloud\n",
                   "dir/group_vars/prod.yml": "ansible_port: 2022\n",
                   "dir/host_vars/vm2.yml": "ansible_host: 127.0.0.82\n"],
                  executables: ["dir/cloud.sh": "#!/bin/sh\n[ \"$1\" = --list ] && echo '\(listing)'\n",
                                "legacy/inventory": """
                                #!/bin/sh
                                case "$1" in
                                --list) echo '{"legacy": ["old1", "old2"]}' ;;
                                --host) [ "$2" = old1 ] && echo '{"ansible_host": "127.0.0.90", "ansible_port": 2290}' || echo '{}' ;;
                                esac
                                """])
        try assertSameAsAnsible("dir")
        try assertSameAsAnsible("dir/cloud.sh")
        try assertSameAsAnsible("legacy/inventory")
    }

    func testAFileGetsTheVarsDirectoriesBesideItAsInAnsible() throws {
        try write(["prod/hosts": "[web]\nw1\nw2 ansible_port=2202\n",
                   "prod/group_vars/web.yml": "ansible_user: deploy\nansible_port: 2200\n",
                   "prod/host_vars/w1": "ansible_host: 127.0.0.91\n",
                   "prod/staging.yml": "all:\n  hosts:\n    s1:\n"])
        try assertSameAsAnsible("prod/hosts")
        try assertSameAsAnsible("prod/staging.yml")
    }

    func testListJSONAgreesWithTheListingItCameFrom() throws {
        try write(["inv/hosts": "[web]\nw1 ansible_host=127.0.0.95\n[db]\nd1\n[prod:children]\nweb\ndb\n",
                   "inv/group_vars/prod.yml": "ansible_user: prod\nansible_port: 2020\n",
                   "inv/host_vars/d1.yml": "ansible_ssh_host: 127.0.0.96\nansible_ssh_port: 2096\n"])
        let listing = try AnsibleInventoryOracle.list(root + "/inv")
        try listing.json.write(to: URL(fileURLWithPath: root + "/listed.json"))
        let inventory = try InventoryLoader().loadWaiting([root + "/listed.json"])
        XCTAssertEqual(inventory.errors, [])
        XCTAssertEqual(inventory.ansibleEndpoints, listing.endpoints)
        XCTAssertEqual(inventory.ansibleGroups, listing.groups)
        let forced = try InventoryLoader(format: .ansibleJSON).loadWaiting([root + "/listed.json"])
        XCTAssertEqual(forced.ansibleEndpoints, listing.endpoints)
    }

    /// The command line on a directory and on `<(ansible-inventory -i DIR --list)`: every host
    /// is on a closed loopback port, so the scan is quick and sends nothing beyond this machine.
    func testScanReadsADirectoryAndAProcessSubstitutedListingAlike() throws {
        let port = try Loopback.freePort()
        try write(["inv/hosts": "[web]\nw1 ansible_host=127.0.0.97\nw2\n[db]\nd1 ansible_user=dba\n",
                   "inv/group_vars/all.yml": "ansible_host: 127.0.0.98\nansible_port: \(port)\n",
                   "inv/group_vars/web.yml": "ansible_user: web\n"])
        let listing = try AnsibleInventoryOracle.list(root + "/inv")
        let shell = "exec \(BuiltProducts.fleettrust) scan --format json --timeout 2 --known-hosts \(root!)/known_hosts"
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = root
        for inventory in ["\(root!)/inv", "<(\(try AnsibleInventoryOracle.executable()) -i \(root!)/inv --list)"] {
            let run = try ProgramRun.run("/bin/bash", ["-c", "\(shell) --inventory \(inventory)"], limit: 120, environment: environment)
            let report = try RecordedScan.decode(Data(run.stdout))
            let endpoints = Dictionary(uniqueKeysWithValues: report.hosts.map { ($0.name, "\($0.user.map { $0 + "@" } ?? "")\($0.host):\($0.port)") })
            XCTAssertEqual(endpoints, listing.endpoints, "\(inventory): \(run.stderrText)")
            XCTAssertEqual(run.status, 1, "every host is unreachable: \(run.stderrText)")
        }
    }
}
