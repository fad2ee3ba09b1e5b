import XCTest
@testable import FleetTrustCore

/// The INI and YAML fixtures describe the same estate, so both readers must give the same hosts.
final class InventoryAnsibleTests: XCTestCase {
    private func checkEstate(_ inventory: Inventory, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(inventory.errors, [], file: file, line: line)
        XCTAssertEqual(Set(inventory.hosts.map(\.name)), [
            "jump.example.com", "web01.example.com", "web02.example.com", "web03.example.com",
            "web-canary.example.com", "db-a.example.com", "db-b.example.com", "db-c.example.com", "db-primary",
            "cache1.example.com", "cache4.example.com", "cache7.example.com", "oldbox",
        ], file: file, line: line)
        XCTAssertEqual(inventory.hosts.count, 13, "a host in several groups is listed once", file: file, line: line)
        func host(_ name: String) -> InventoryHost { inventory[name]! }

        XCTAssertEqual(host("jump.example.com").groups, ["ungrouped"], file: file, line: line)
        XCTAssertEqual(host("jump.example.com").user, "ops", "host vars beat all vars", file: file, line: line)
        XCTAssertEqual(host("jump.example.com").port, 22, file: file, line: line)

        let web01 = host("web01.example.com")
        XCTAssertEqual(Set(web01.groups), ["web", "cache"], file: file, line: line)
        XCTAssertEqual(Set(web01.inheritedGroups), ["london", "prod"], file: file, line: line)
        XCTAssertEqual(web01.port, 2122, "child group vars (london) beat parent group vars (prod)", file: file, line: line)
        XCTAssertEqual(web01.user, "produser", "group vars beat all vars", file: file, line: line)

        XCTAssertEqual(host("web-canary.example.com").port, 2222, file: file, line: line)
        XCTAssertEqual(host("web-canary.example.com").user, "deploy user", "quoted value", file: file, line: line)
        XCTAssertEqual(host("db-primary").address, "10.0.0.5", file: file, line: line)
        XCTAssertEqual(host("db-primary").port, 2201, "ansible_ssh_port is honoured", file: file, line: line)
        XCTAssertEqual(host("oldbox").address, "192.0.2.50", file: file, line: line)
        XCTAssertEqual(host("oldbox").user, "root", file: file, line: line)
        XCTAssertEqual(host("oldbox").port, 2022, file: file, line: line)
        XCTAssertEqual(host("cache4.example.com").user, "everyone", file: file, line: line)
        XCTAssertEqual(host("cache4.example.com").inheritedGroups, [], file: file, line: line)

        XCTAssertEqual(Set(inventory.hosts(inGroup: "prod").map(\.name)), [
            "web01.example.com", "web02.example.com", "web03.example.com", "web-canary.example.com",
            "db-a.example.com", "db-b.example.com", "db-c.example.com", "db-primary", "oldbox",
        ], file: file, line: line)
        XCTAssertEqual(inventory.hosts(inGroup: "cache").count, 4, file: file, line: line)
        XCTAssertEqual(inventory.hosts(inGroup: "all").count, 13, file: file, line: line)
        XCTAssertEqual(inventory.hosts(inGroup: "ungrouped").map(\.name), ["jump.example.com"], file: file, line: line)
    }

    func testINIFixtureResolvesGroupsChildrenVarsAndRanges() throws {
        let inventory = try InventoryFixtures.read("hosts.ini")
        checkEstate(inventory)
        XCTAssertEqual(inventory.hosts.prefix(4).map(\.name),
                       ["jump.example.com", "web01.example.com", "web02.example.com", "web03.example.com"])
        XCTAssertEqual(inventory["web02.example.com"]?.source, SourceLocation(file: "hosts.ini", line: 5))
    }

    func testYAMLFixtureResolvesLikeTheINIOne() throws {
        checkEstate(try InventoryFixtures.read("inventory.yml"))
    }

    func testHostPatternPortIsOverriddenByAnsiblePortOnTheSameLine() {
        let inventory = InventoryFixtures.read(text: "[g]\na.example.com:2200\nb.example.com:2200 ansible_port=2300\n",
                                               format: .ansibleINI)
        XCTAssertEqual(inventory.hosts.map(\.port), [2200, 2300])
    }

    func testRangesPadStepAndUseLetters() {
        let text = "[g]\nn[08:11]\ns[1:10:4]\nx-[y:B]\nmulti[1:2]-[a:b]\n"
        let names = InventoryFixtures.read(text: text, format: .ansibleINI).hosts.map(\.name)
        XCTAssertEqual(names, ["n08", "n09", "n10", "n11", "s1", "s5", "s9", "x-y", "x-z", "x-A", "x-B",
                               "multi1-a", "multi1-b", "multi2-a", "multi2-b"])
    }

    func testEveryINIErrorIsReportedAtItsLine() throws {
        let inventory = try InventoryFixtures.read("broken.ini")
        let lines = inventory.errors.map(\.location.line)
        XCTAssertEqual(lines, [3, 4, 5, 8, 10, 11, 14, 15, 16], inventory.errors.map(\.description).joined(separator: "\n"))
        XCTAssertTrue(inventory.errors.allSatisfy { $0.description.hasPrefix("broken.ini:") })
        XCTAssertEqual(Set(inventory.hosts.map(\.name)), ["web1.example.com", "good.example.com"])
        XCTAssertEqual(inventory.skipped, 7)
    }

    func testChildCycleIsReportedAndIgnored() {
        let inventory = InventoryFixtures.read(text: "[a:children]\nb\n[b:children]\na\n[b]\nh1\n", format: .ansibleINI)
        XCTAssertEqual(inventory.errors.map(\.location.line), [4])
        XCTAssertEqual(inventory["h1"]?.inheritedGroups, ["a"])
    }

    func testYAMLSyntaxErrorIsReportedWithItsLine() {
        let inventory = InventoryFixtures.read(text: "all:\n  hosts:\n    a:\n   b: [\n", name: "inv.yml", format: .ansibleYAML)
        XCTAssertEqual(inventory.hosts, [])
        XCTAssertEqual(inventory.errors.count, 1)
        XCTAssertTrue(inventory.errors[0].description.hasPrefix("inv.yml:"), inventory.errors[0].description)
    }

    func testYAMLStructureErrorsAreAllReportedAndGoodHostsKept() {
        let text = """
        all:
          hosts:
            good.example.com:
            bad.example.com:
              ansible_port: 70000
          children:
            listy:
              hosts:
                - not-a-mapping
            ranged:
              hosts:
                r[9:1]:
        """
        let inventory = InventoryFixtures.read(text: text, name: "inv.yml", format: .ansibleYAML)
        XCTAssertEqual(inventory.hosts.map(\.name), ["good.example.com"])
        XCTAssertEqual(inventory.errors.map(\.location.line).sorted(), [4, 9, 12],
                       inventory.errors.map(\.description).joined(separator: "\n"))
    }

    func testYAMLAliasBombIsBounded() {
        var text = "all:\n  children:\n    g0: &g0 {hosts: {h0: }}\n"
        for level in 1...40 {
            text += "    g\(level): &g\(level) {children: {a\(level): *g\(level - 1), b\(level): *g\(level - 1)}}\n"
        }
        let inventory = InventoryFixtures.read(text: text, format: .ansibleYAML)
        XCTAssertEqual(inventory.hosts.map(\.name), ["h0"])
        XCTAssertTrue(inventory.errors.contains { $0.message.contains("aliases?") },
                      inventory.errors.map(\.description).joined(separator: "\n"))
    }

    func testAnsibleSSHVariantsWinOverTheNewNamesLikeAnsiblesSSHPlugin() {
        let text = "[g]\nh ansible_ssh_host=10.0.0.1 ansible_port=2200 ansible_user=new\n[g:vars]\nansible_host=10.0.0.9\nansible_ssh_user=old\n"
        let host = InventoryFixtures.read(text: text, format: .ansibleINI).hosts[0]
        XCTAssertEqual(host.address, "10.0.0.1")
        XCTAssertEqual(host.port, 2200)
        XCTAssertEqual(host.user, "old")
    }

    func testAProxyInAnsiblesSSHArgumentsIsRecorded() {
        let text = """
        [inner]
        a ansible_host=10.1.0.5 ansible_ssh_common_args='-o ProxyJump=admin@bastion'
        b ansible_ssh_extra_args="-J gate.example.com"
        c ansible_ssh_common_args='-o ProxyCommand="ssh -W %h:%p gate"'
        d ansible_ssh_common_args='-o ProxyJump=none -o ForwardAgent=no'
        e ansible_ssh_common_args='-o StrictHostKeyChecking=yes'
        [outer]
        f
        [outer:vars]
        ansible_ssh_common_args=-oProxyJump=edge
        """
        let hosts = InventoryFixtures.read(text: text, format: .ansibleINI).hosts
        let proxies = Dictionary(uniqueKeysWithValues: hosts.map { ($0.name, $0.route.proxyDirective) })
        XCTAssertEqual(proxies["a"], .some("ProxyJump admin@bastion"))
        XCTAssertEqual(proxies["b"], .some("ProxyJump gate.example.com"))
        XCTAssertEqual(proxies["c"], .some("ProxyCommand ssh -W %h:%p gate"))
        XCTAssertEqual(proxies["d"], .some(nil), "ProxyJump=none connects directly")
        XCTAssertEqual(proxies["e"], .some(nil))
        XCTAssertEqual(proxies["f"], .some("ProxyJump edge"), "group vars apply")
    }

    /// Ansible hands these words to `ssh`, which reads them with its own option letters: a proxy,
    /// `HostName` or port that `ssh` takes from them and fleettrust missed sent the probe to
    /// another machine than the one `ssh` meets (the real `ssh` said "Host key verification
    /// failed" or went through a bastion where fleettrust said trusted).
    func testArgumentsThatMakeSSHDecideElsewhereLeaveTheHostUncheckedNamingThem() {
        let text = """
        [web]
        otherconfig ansible_ssh_common_args='-F /tmp/another_config'
        stray ansible_ssh_common_args='-o ForwardAgent=no gate.example.com'
        both ansible_ssh_common_args='-o ProxyCommand=none -J gate'
        login ansible_ssh_common_args='-l deploy'
        jumpfirst ansible_ssh_common_args='-J gate -o ProxyCommand=none'
        optionjump ansible_ssh_common_args='-o ProxyCommand=none -o ProxyJump=gate'
        plain ansible_ssh_common_args='-C -o ForwardAgent=no'
        """
        let hosts = Dictionary(uniqueKeysWithValues: InventoryFixtures.read(text: text, format: .ansibleINI).hosts.map { ($0.name, $0) })
        func unjudged(_ name: String) -> [String] { hosts[name]?.sshOptions.unjudged?.map(\.keyword) ?? [] }
        XCTAssertEqual(unjudged("otherconfig"), ["-F"])
        XCTAssertEqual(unjudged("stray"), ["destination"])
        XCTAssertTrue(hosts["stray"]?.sshOptions.unjudged?.first?.why.contains("'gate.example.com'") == true)
        XCTAssertEqual(unjudged("both"), ["ProxyJump"])
        XCTAssertEqual(unjudged("plain"), [])
        // As `ssh -G` answers: -J first is a jump; -o ProxyJump after ProxyCommand=none is simply second.
        XCTAssertEqual(unjudged("jumpfirst"), [])
        XCTAssertEqual(hosts["jumpfirst"]?.route.jumpHosts.map(\.host), ["gate"])
        XCTAssertEqual(unjudged("optionjump"), [])
        XCTAssertEqual(hosts["optionjump"]?.route.isDirect, true)
        XCTAssertEqual(hosts["login"]?.user, "deploy", "-l is the login ssh uses")
    }

    func testAnsibleSSHArgumentsAreReadAsSSHReadsItsCommandLine() {
        let text = """
        [web]
        cluster ansible_ssh_common_args='-CoProxyCommand="ssh -W %h:%p gate"'
        jcluster ansible_ssh_common_args='-4J gate'
        quoted ansible_ssh_common_args='-o"ProxyJump gate"'
        sshargs ansible_ssh_args='-C -o ProxyJump=gate' ansible_ssh_common_args='-o ProxyJump=other'
        argument ansible_ssh_common_args='-i -Jkey -o ForwardAgent=no'
        renamed ansible_host=10.0.0.5 ansible_ssh_common_args='-o HostName=10.9.9.9'
        dashp ansible_ssh_common_args='-p 2222'
        dashpafter ansible_port=22 ansible_ssh_common_args='-p 2222'
        portfirst ansible_port=22 ansible_ssh_args='-o Port=2200'
        revoked ansible_ssh_common_args='-vo RevokedHostKeys=/etc/ssh/revoked'
        """
        let hosts = Dictionary(uniqueKeysWithValues: InventoryFixtures.read(text: text, format: .ansibleINI).hosts.map { ($0.name, $0) })
        XCTAssertEqual(hosts["cluster"]?.route.hops, [.command("ssh -W %h:%p gate")], "-Co is -C then -o")
        XCTAssertEqual(hosts["jcluster"]?.route.jumpHosts.map(\.host), ["gate"], "-4J is -4 then -J")
        XCTAssertEqual(hosts["quoted"]?.route.jumpHosts.map(\.host), ["gate"], "shlex joins -o\"ProxyJump gate\" into one word")
        XCTAssertEqual(hosts["sshargs"]?.route.jumpHosts.map(\.host), ["gate"], "ansible_ssh_args come first on ssh's command line")
        XCTAssertEqual(hosts["argument"]?.route.isDirect, true, "-Jkey is the argument of -i, not a proxy")
        XCTAssertEqual(hosts["renamed"]?.address, "10.9.9.9", "-o HostName is where ssh connects and the name it looks up")
        XCTAssertEqual(hosts["dashp"]?.port, 2222)
        XCTAssertEqual(hosts["dashpafter"]?.port, 22, "Ansible's own -o Port= for ansible_port comes before the common args")
        XCTAssertEqual(hosts["portfirst"]?.port, 2200, "ansible_ssh_args come before Ansible's -o Port=")
        XCTAssertEqual(hosts["revoked"]?.sshOptions.revokedHostKeys, ["/etc/ssh/revoked"])
    }
}
