import Foundation
import XCTest
import FleetTrustTestFleet
@testable import FleetTrustCore

final class InventorySSHConfigTests: XCTestCase {
    func testFixtureResolvesEachAliasAsSSHWould() throws {
        let inventory = try InventoryFixtures.read("ssh_config")
        XCTAssertEqual(inventory.hosts.map(\.name),
                       ["lab1", "lab2", "extra", "bastion", "app1", "app2", "db-primary", "legacy", "web.example.com"],
                       "concrete aliases in file order, included files first; wildcards and !negations are not hosts")
        func host(_ name: String) -> InventoryHost { inventory[name]! }
        XCTAssertEqual(host("lab1").address, "lab1.lab.example.com", "%h expands to the alias")
        XCTAssertEqual(host("lab1").port, 2022, "Host * supplies defaults")
        XCTAssertEqual(host("lab2").port, 2201)
        XCTAssertEqual(host("lab1").source, SourceLocation(file: InventoryFixtures.path("ssh_config.d/10-lab.conf"), line: 2))
        XCTAssertEqual(host("extra").address, "2001:db8::20")
        XCTAssertEqual(host("bastion").user, "jump")
        XCTAssertEqual(host("app1").port, 2222, "the first value obtained wins")
        XCTAssertEqual(host("app1").user, "appadmin")
        XCTAssertEqual(host("app2").address, "app2.internal.example.com")
        XCTAssertEqual(host("app2").user, "internal", "Match host sees the HostName obtained so far")
        XCTAssertEqual(host("db-primary").address, "10.0.0.5", "key=value form")
        XCTAssertEqual(host("db-primary").hostKeyAlias, "db-primary.example.com")
        XCTAssertEqual(host("legacy").address, "old box.example.com", "quoted argument, lowercase keyword")
        XCTAssertEqual(host("legacy").port, 2200, "PORT = 2200")
        XCTAssertEqual(host("legacy").userKnownHostsFiles,
                       ["/home/operator/.ssh/known_hosts.legacy", "/etc/ssh/known_hosts.old box.example.com"])
        XCTAssertEqual(host("web.example.com").user, "wildcard", "a wildcard block before Host * gives its default")
        XCTAssertEqual(host("web.example.com").port, 2223)
        XCTAssertEqual(inventory.errors, [])
        XCTAssertEqual(inventory.diagnostics.map(\.description), [], "Match exec is read (an inventory's is never run)")
    }

    func testBadLinesAreReportedAndTheRestStillResolves() {
        let text = """
        Host a
          Port 70000
          HostName "unterminated
          User
          HostName a.example.com
        Host b
          HostName %z.example.com
        """
        let inventory = InventoryFixtures.read(text: text, name: "cfg", format: .sshConfig)
        XCTAssertEqual(inventory.errors.map(\.description), [
            "cfg:2: Port: port '70000' is not a number from 1 to 65535; ignored",
            "cfg:3: invalid quotes; ssh refuses the configuration",
            "cfg:4: no argument after keyword 'User'; ssh refuses the configuration",
            "cfg:7: HostName '%z.example.com' has an unknown or unsupported % token; ignored",
        ])
        XCTAssertEqual(inventory["a"]?.address, "a.example.com")
        XCTAssertEqual(inventory["a"]?.port, 22)
        XCTAssertEqual(inventory["b"]?.address, "b")
        // ssh refuses the whole file for the quotes and the missing argument, whichever host it is asked for.
        XCTAssertEqual(inventory["b"]?.sshOptions.unjudged?.map(\.keyword), ["HostName", "User"])
        XCTAssertEqual(inventory["b"]?.sshOptions.unjudged?.first?.location?.line, 3)
    }

    /// `ssh` reads a line of any length: a generated `Host` line naming thousands of hosts, or a
    /// long algorithm list, is read as `ssh` reads it; one past fleettrust's bound leaves every
    /// host unchecked, never judged without it.
    func testLongLinesAreReadAndOneTooLongLeavesEveryHostUnjudged() {
        let names = (0..<4000).map { "host\($0).example.com" }.joined(separator: " ")
        let long = InventoryFixtures.read(text: "Host \(names)\n  HostKeyAlgorithms rsa-sha2-512\nHost other\n  Port 2222\n",
                                          name: "cfg", format: .sshConfig)
        XCTAssertEqual(long.errors, [])
        XCTAssertEqual(long["host3999.example.com"]?.sshOptions.hostKeyAlgorithms, "rsa-sha2-512")
        XCTAssertNil(long["other"]?.sshOptions.hostKeyAlgorithms)
        let tooLong = InventoryFixtures.read(text: "Host web\n  HostKeyAlgorithms " + String(repeating: "rsa-sha2-512,", count: 90_000) + "ssh-ed25519\n",
                                             name: "cfg", format: .sshConfig)
        XCTAssertEqual(tooLong.errors.map(\.location.line), [2])
        XCTAssertEqual(tooLong["web"]?.sshOptions.unjudged?.map(\.keyword), ["HostKeyAlgorithms"])
    }

    func testIncludeInsideAHostBlockAppliesOnlyToThatHost() throws {
        let directory = try TemporaryDirectory()
        try "Port 2999\nHost inner\n  HostName inner.example.com\n".write(toFile: directory.path + "/part.conf", atomically: true, encoding: .utf8)
        let text = "Host outer\n  Include part.conf\nHost other\n  User someone\n"
        var options = InventoryFixtures.options
        options.includeDirectory = directory.path
        let inventory = InventoryFixtures.read(text: text, format: .sshConfig, options: options)
        XCTAssertEqual(inventory["outer"]?.port, 2999)
        XCTAssertEqual(inventory["other"]?.port, 22)
        XCTAssertEqual(inventory["inner"]?.address, "inner", "Host lines in a file included under an inactive block never match")
    }

    func testSelfIncludeIsBoundedAndReported() throws {
        let directory = try TemporaryDirectory()
        let file = directory.path + "/loop.conf"
        try "Host h\nInclude \(file)\n".write(toFile: file, atomically: true, encoding: .utf8)
        let inventory = InventoryFixtures.read(text: "Include \(file)\n", format: .sshConfig)
        XCTAssertEqual(inventory.hosts.map(\.name), ["h"])
        XCTAssertTrue(inventory.errors.contains { $0.message.contains("nested more than 16") })
    }

    /// The real `ssh -G` is the oracle: for every alias, what it would use must be what we read.
    func testResolutionAgreesWithSSHMinusG() throws {
        let directory = try TemporaryDirectory()
        try """
        Host inc1 inc2
            HostName %h.included.example.com
        Host inc2
            Port 4022
        """.write(toFile: directory.path + "/a.conf", atomically: true, encoding: .utf8)
        try "Host inc3\n  HostKeyAlias inc3-alias\n".write(toFile: directory.path + "/b.conf", atomically: true, encoding: .utf8)
        let config = """
        # test config
        Include \(directory.path)/*.conf
        Host alpha beta
            HostName %h.Example.COM
            Port 2201
        Host beta
            Port 9999
            User betauser
        host=gamma
            hostname=10.1.2.3
            port = 2202
            hostkeyalias gamma.Keys
        Host delta
            HostName 127.0.0.1
        Host Mixed
            User mixedcase
        Host mixed
            Port 2299
        Host epsilon zeta
        Match host *.example.com
            User matched
            UserKnownHostsFile ~/.ssh/kh_%h_%p %d/other_%n_%k_%r
        Match originalhost zeta
            Port 2777
        Match !host *.example.com
            User notexample
        Host * !delta
            Port 2022
            User fallback
        Host *
            UserKnownHostsFile /tmp/kh_%h_%p_%u
        """
        let configPath = directory.path + "/config"
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        let inventory = InventoryFixtures.read(text: config, name: configPath, format: .sshConfig,
                                               options: InventoryReadOptions())
        XCTAssertEqual(inventory.diagnostics, [])
        XCTAssertEqual(inventory.hosts.map(\.name),
                       ["inc1", "inc2", "inc3", "alpha", "beta", "gamma", "delta", "Mixed", "mixed", "epsilon", "zeta"])
        for host in inventory.hosts {
            let oracle = try sshMinusG(configPath, host.name)
            XCTAssertEqual(host.address.lowercased(), oracle["hostname"], host.name)
            XCTAssertEqual(String(host.port), oracle["port"], host.name)
            XCTAssertEqual(host.user ?? InventoryReadOptions().localUser, oracle["user"], host.name)
            XCTAssertEqual(host.hostKeyAlias?.lowercased(), oracle["hostkeyalias"], host.name)
            XCTAssertEqual(host.userKnownHostsFiles.joined(separator: " "), oracle["userknownhostsfile"], host.name)
        }
    }

    /// The settings that change ssh's verdict, read per host as `ssh -G` resolves them, and
    /// `HostKeyAlgorithms` assembled (`+`, `-`, `^`, patterns) to exactly the list ssh uses.
    func testVerdictSettingsAndHostKeyAlgorithmsAgreeWithSSHMinusG() throws {
        let directory = try TemporaryDirectory()
        let config = """
        Host one
            HostName 10.0.0.1
            HostKeyAlgorithms +ssh-rsa
            CheckHostIP yes
            HashKnownHosts no
            GlobalKnownHostsFile /etc/ssh/a %d/b_%h
        Host two
            HostName 10.0.0.2
            HostKeyAlgorithms -*-cert-v01@openssh.com,ecdsa*
        Host three
            HostName 10.0.0.3
            HostKeyAlgorithms ^rsa-sha2-512,ssh-ed25519
            CheckHostIP no
        Host four
            HostName 10.0.0.4
            HostKeyAlgorithms ssh-ed25519*,rsa-sha2-*
        Host five
            HostName 10.0.0.5
        Host *
            HashKnownHosts yes
        """
        let configPath = directory.path + "/config"
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        let inventory = InventoryFixtures.read(text: config, name: configPath, format: .sshConfig, options: InventoryReadOptions())
        XCTAssertEqual(inventory.diagnostics, [])
        XCTAssertEqual(inventory.hosts.count, 5)
        for host in inventory.hosts {
            let oracle = try sshMinusG(configPath, host.name)
            XCTAssertEqual(try HostKeyAlgorithms.assemble(host.sshOptions.hostKeyAlgorithms).joined(separator: ","),
                           oracle["hostkeyalgorithms"], host.name)
            XCTAssertEqual(host.sshOptions.hashKnownHosts ?? false, oracle["hashknownhosts"] == "yes", host.name)
            XCTAssertEqual(host.sshOptions.checkHostIP ?? false, oracle["checkhostip"] == "yes", host.name)
            if let global = host.sshOptions.globalKnownHostsFiles {
                XCTAssertEqual(global.joined(separator: " "), oracle["globalknownhostsfile"], host.name)
            }
        }
        XCTAssertEqual(inventory.hosts.first?.sshOptions.globalKnownHostsFiles?.count, 2)
    }

    private func sshMinusG(_ config: String, _ alias: String) throws -> [String: String] {
        let output = try Tool.run("/usr/bin/ssh", ["-F", config, "-G", alias])
        XCTAssertEqual(output.status, 0)
        var result: [String: String] = [:]
        for line in output.stdout.split(separator: "\n") {
            guard let space = line.firstIndex(of: " ") else { continue }
            let key = String(line[..<space])
            if result[key] == nil { result[key] = String(line[line.index(after: space)...]) }
        }
        return result
    }
}

/// A directory under the system temporary directory, removed when the value is released.
final class TemporaryDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "fleettrust-inventory-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

extension InventorySSHConfigTests {
    func testProxyJumpAndProxyCommandAreRecordedFirstOneWinningAndNoneMeaningDirect() {
        let text = """
        Host inner
          HostName 10.1.0.5
          ProxyJump admin@bastion.example.com:2222
        Host piped
          ProxyCommand ssh -W %h:%p gate
          ProxyJump ignored-because-second
        Host plain
          ProxyJump none
        Host direct-too
          HostName 10.1.0.9
        Host *
          ProxyJump default-bastion
        """
        let inventory = InventoryFixtures.read(text: text, name: "cfg", format: .sshConfig)
        XCTAssertEqual(inventory.errors, [])
        XCTAssertEqual(inventory["inner"]?.route.proxyDirective, "ProxyJump admin@bastion.example.com:2222")
        XCTAssertEqual(inventory["piped"]?.route.proxyDirective, "ProxyCommand ssh -W %h:%p gate", "whichever of the two comes first wins, as in ssh")
        XCTAssertNil(inventory["plain"]?.route.proxyDirective, "ProxyJump none: ssh connects directly, and Host * cannot change that")
        XCTAssertEqual(inventory["direct-too"]?.route.proxyDirective, "ProxyJump default-bastion", "Host * supplies the default")
    }
}
