import XCTest
@testable import FleetTrustCore

/// Ansible's variable precedence across inventory files, `group_vars/` and `host_vars/`, on real
/// directories (the same layouts are checked against `ansible-inventory` in the end-to-end tests).
final class InventoryPrecedenceTests: XCTestCase {
    private var trees: [InventoryTree] = []

    override func tearDown() {
        trees.forEach { $0.remove() }
    }

    private func load(_ files: [String: String], _ relative: String = "") throws -> Inventory {
        let made = try InventoryTree(files)
        trees.append(made)
        return try made.load(relative)
    }

    private static let layered = [
        "hosts": """
        [all:vars]
        ansible_user=inv_all
        ansible_port=1001
        [parent:vars]
        ansible_user=inv_parent
        ansible_port=1002
        [child:vars]
        ansible_user=inv_child
        [parent:children]
        child
        [child]
        c1
        c2 ansible_user=inv_host
        c3 ansible_user=inv_host
        [parent]
        p1
        [other]
        o1
        """,
        "group_vars/all.yml": "ansible_port: 2001\n",
        "group_vars/parent.yml": "ansible_host: gv-parent\n",
        "group_vars/child.yml": "ansible_host: gv-child\n",
        "host_vars/c3.yml": "ansible_user: hv\n",
    ]

    func testEveryLayerBeatsTheOneBelowIt() throws {
        let inventory = try load(Self.layered)
        XCTAssertEqual(inventory.errors, [])
        XCTAssertEqual(inventory.endpoints, [
            "o1": "inv_all@o1:2001",
            "p1": "inv_parent@gv-parent:2001",
            "c1": "inv_child@gv-child:2001",
            "c2": "inv_host@gv-child:2001",
            "c3": "hv@gv-child:2001",
        ])
    }

    func testGroupVarsFilesBeatInventoryGroupVarsEvenOfADeeperGroup() throws {
        let inventory = try load(["hosts": "[parent:children]\nchild\n[child]\nh ansible_host=inline\n[child:vars]\nansible_port=1\n",
                                  "group_vars/all.yml": "ansible_port: 2\n"])
        XCTAssertEqual(inventory.endpoints, ["h": "inline:2"], "group_vars/all is above every inventory group var")
    }

    func testInventoryHostVarsBeatEveryGroupVarAndLoseOnlyToHostVarsFiles() throws {
        let inventory = try load(["hosts": "h ansible_port=5\n", "group_vars/all.yml": "ansible_port: 6\n",
                                  "group_vars/ungrouped.yml": "ansible_port: 7\n"])
        XCTAssertEqual(inventory.endpoints, ["h": "h:5"], "inventory host vars beat every group var")
        let withHostVars = try load(["hosts": "h ansible_port=5\n", "host_vars/h": "ansible_port: 8\n"])
        XCTAssertEqual(withHostVars.endpoints, ["h": "h:8"])
    }

    func testAtEqualDepthTheLaterNameWinsUnlessPriorityOrdersThem() throws {
        let byName = try load(["hosts": "[b]\nh\n[a]\nh\n[a:vars]\nansible_user=ua\n[b:vars]\nansible_user=ub\n"])
        XCTAssertEqual(byName.endpoints, ["h": "ub@h:22"])
        let byPriority = try load(["hosts": "[b]\nh\n[a]\nh\n[a:vars]\nansible_user=ua\nansible_group_priority=10\n[b:vars]\nansible_user=ub\n"])
        XCTAssertEqual(byPriority.endpoints, ["h": "ua@h:22"], "a higher priority is applied later")
        let filesByName = try load(["hosts": "[b]\nh\n[a]\nh\n", "group_vars/a.yml": "ansible_user: fa\n",
                                    "group_vars/b.yml": "ansible_user: fb\n"])
        XCTAssertEqual(filesByName.endpoints, ["h": "fb@h:22"])
    }

    func testADeeperGroupsVarsFileBeatsItsParentsWhateverTheNames() throws {
        let inventory = try load(["hosts": "[zparent:children]\nachild\n[achild]\nh\n",
                                  "group_vars/zparent.yml": "ansible_user: parent\n",
                                  "group_vars/achild.yml": "ansible_user: child\n"])
        XCTAssertEqual(inventory.endpoints, ["h": "child@h:22"])
    }

    func testLaterFilesOfAVarsDirectoryWin() throws {
        let inventory = try load(["hosts": "[web]\nw\n", "group_vars/web/10-port.yml": "ansible_port: 10\n",
                                  "group_vars/web/20-port.yml": "ansible_port: 20\n", "group_vars/web/05.yml": "ansible_user: u\n"])
        XCTAssertEqual(inventory.endpoints, ["w": "u@w:20"])
    }

    func testFilesOfOneDirectoryShareOneGroupTree() throws {
        let inventory = try load(["a.ini": "[web]\nw1 ansible_port=1\n[prod:vars]\nansible_user=produser\n",
                                  "b.yml": "all:\n  children:\n    prod:\n      children:\n        web:\n      hosts:\n        w1:\n          ansible_port: 2\n"])
        XCTAssertEqual(inventory.endpoints, ["w1": "produser@w1:2"], "the later file's host var wins; the child link in b.yml gives w1 prod's vars")
        XCTAssertEqual(inventory.hosts[0].groups.sorted(), ["prod", "web"])
    }

    func testAFileNamedAloneGetsTheVarsDirectoriesBesideIt() throws {
        let inventory = try load(["inventories/prod/hosts": "[web]\nw1\n",
                                  "inventories/prod/group_vars/web.yml": "ansible_host: 127.0.0.9\nansible_user: deploy\n",
                                  "inventories/prod/host_vars/w1/port.yml": "ansible_port: 2222\n"], "inventories/prod/hosts")
        XCTAssertEqual(inventory.endpoints, ["w1": "deploy@127.0.0.9:2222"])
    }

    func testABadValueInAVarsFileIsReportedAtItsLine() throws {
        let made = try InventoryTree(["hosts": "[web]\nw1\nw2 ansible_port=2200\n",
                                      "group_vars/web.yml": "# ports\nansible_port: not-a-port\nfleettrust_policy: pinned\n"])
        trees.append(made)
        let inventory = try made.load()
        XCTAssertEqual(inventory.hosts.map(\.name), ["w2"])
        XCTAssertEqual(inventory.hosts.first?.policy, "pinned")
        XCTAssertEqual(inventory.errors.map(\.location), [SourceLocation(file: made.path("group_vars/web.yml"), line: 2)])
        XCTAssertEqual(inventory.skipped, 1)
    }

    func testSSHArgumentsFromGroupVarsReachTheHost() throws {
        let inventory = try load(["hosts": "[dmz]\nd1\n",
                                  "group_vars/dmz.yml": "ansible_ssh_common_args: '-o ProxyJump=bastion -o HostKeyAlias=d1.example'\n"])
        XCTAssertEqual(inventory.hosts.first?.hostKeyAlias, "d1.example")
        XCTAssertEqual(inventory.hosts.first?.route.proxyDirective, "ProxyJump bastion")
    }

    func testVaultedAndTemplatedValuesAreNotTakenAtFaceValue() throws {
        let made = try InventoryTree(["hosts": "[web]\nw1 ansible_host=127.0.0.5\n",
                                      "group_vars/all/vault.yml": "$ANSIBLE_VAULT;1.1;AES256\n6162636465\n",
                                      "group_vars/web.yml": "ansible_user: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  6162\nansible_port: 2022\n",
                                      "host_vars/w1.yml": "ansible_host: \"{{ inventory_hostname }}.example\"\n"])
        trees.append(made)
        let inventory = try made.load()
        XCTAssertEqual(inventory.endpoints, ["w1": "{{ inventory_hostname }}.example:2022"])
        XCTAssertTrue(inventory.diagnostics.contains { $0.severity == .warning && $0.message.contains("ansible-vault") })
        XCTAssertTrue(inventory.diagnostics.contains { $0.severity == .warning && $0.message.contains("Jinja2 template")
            && $0.location == SourceLocation(file: made.path("host_vars/w1.yml"), line: 1) })
    }
}
