import Foundation
import XCTest
import FleetTrustTestFleet
@testable import FleetTrustCore

/// The one keyword table: ssh_config lines and Ansible `-o` arguments read the same way, settings
/// fleettrust cannot judge make the host unchecked with the keyword and its line, and the typed
/// options travel through the JSON report and back unchanged.
final class SSHOptionTableTests: XCTestCase {
    private func hosts(_ text: String, format: InventoryFormat = .sshConfig) -> Inventory {
        InventoryFixtures.read(text: text, name: "cfg", format: format)
    }

    func testSettingsFleettrustCannotJudgeMakeTheHostUncheckedNamingKeywordAndLine() throws {
        let inventory = hosts("""
        Host cmd
          KnownHostsCommand /usr/local/bin/keys %H
        Host canon
          CanonicalizeHostname yes
        Host dns
          VerifyHostKeyDNS ask
          AddressFamily INET6
        Host off
          KnownHostsCommand none
          CanonicalizeHostname no
        Host *
          KnownHostsCommand /other
        """)
        XCTAssertEqual(inventory["cmd"]?.sshOptions.unjudged?.map(\.keyword), ["KnownHostsCommand"])
        XCTAssertEqual(inventory["cmd"]?.sshOptions.unjudged?.first?.location, SourceLocation(file: "cfg", line: 2))
        let bad = hosts("Host x\n  AddressFamily ipv4\n").diagnostics.map(\.message)
        XCTAssertTrue(bad.contains { $0.contains("AddressFamily:") && $0.contains("is not any, inet or inet6") }, "\(bad)")
        XCTAssertEqual(inventory["canon"]?.sshOptions.unjudged?.map(\.keyword), ["CanonicalizeHostname", "KnownHostsCommand"])
        XCTAssertEqual(inventory["dns"]?.sshOptions.unjudged?.map(\.keyword), ["KnownHostsCommand"], "VerifyHostKeyDNS is judged (SSHFPJudgementTests)")
        XCTAssertEqual(inventory["dns"]?.sshOptions.verifyHostKeyDNS, .ask)
        XCTAssertEqual(inventory["dns"]?.sshOptions.addressFamily, .inet6, "AddressFamily is judged (CanonicalNameOracleTests)")
        XCTAssertEqual(inventory["dns"]?.sshOptions.commandLineOptions.suffix(2), ["-o", "AddressFamily=inet6"])
        XCTAssertNil(inventory["off"]?.sshOptions.unjudged, "none and no turn them off, and the first value wins over Host *")

        let key = TestKeys.a
        let judge = FleetJudge(knownHosts: KnownHosts(files: [TestKeys.file("cmd \(key.openSSHLine)\n")]), pins: nil)
        let host = try XCTUnwrap(inventory["cmd"])
        let judged = judge.judge(host, ProbeResult(host: "cmd", port: 22, keys: [DiscoveredKey(key: key)]))
        XCTAssertEqual(judged.status, .unchecked, "known_hosts alone would say trusted; ssh would also read the command's keys")
        XCTAssertEqual(JudgementWords.reason(judged),
                       "not judged: KnownHostsCommand (cfg:2): the inventory sets it, and fleettrust never runs a command an inventory names (ssh's answer under this setting is not reproduced)")
        XCTAssertEqual(judged.saving, .refused(.unchecked))
    }

    func testNoHostAuthenticationForLocalhostTrustsOnlyADirectLoopbackPeerWithoutAlias() {
        let inventory = hosts("""
        Host local aliased
          NoHostAuthenticationForLocalhost yes
        Host aliased
          HostKeyAlias elsewhere
        """)
        let judge = FleetJudge(knownHosts: KnownHosts(files: [TestKeys.file("local \(TestKeys.b.openSSHLine)\nelsewhere \(TestKeys.b.openSSHLine)\n")]),
                               pins: nil)
        func status(_ name: String, peer: String?) -> (HostStatus, [TrustBasis]) {
            var result = ProbeResult(host: name, port: 22, keys: [DiscoveredKey(key: TestKeys.a)])
            result.peerAddress = peer
            let judged = judge.judge(inventory[name]!, result)
            return (judged.status, judged.trustedBy)
        }
        XCTAssertNil(inventory["local"]?.sshOptions.unjudged)
        XCTAssertEqual(inventory["local"]?.sshOptions.noHostAuthenticationForLocalhost, true)
        XCTAssertEqual(status("local", peer: "127.3.4.5").0, .trusted)
        XCTAssertEqual(status("local", peer: "127.3.4.5").1, [.localhostExemption])
        XCTAssertEqual(status("local", peer: "::1").0, .trusted)
        XCTAssertEqual(status("local", peer: "10.0.0.1").0, .changed, "not a loopback peer")
        XCTAssertEqual(status("local", peer: nil).0, .changed, "behind a route ssh knows no peer address")
        XCTAssertEqual(status("aliased", peer: "127.0.0.1").0, .changed, "HostKeyAlias takes the exemption away")
    }

    func testAnAlarmStaysAnAlarmUnderAnUnjudgedSetting() {
        let host = hosts("Host cmd\n  KnownHostsCommand /bin/keys\n")["cmd"]!
        let judge = FleetJudge(knownHosts: KnownHosts(files: [TestKeys.file("cmd \(TestKeys.b.openSSHLine)\n")]), pins: nil)
        XCTAssertEqual(judge.judge(host, ProbeResult(host: "cmd", port: 22, keys: [DiscoveredKey(key: TestKeys.a)])).status, .changed)
    }

    func testMatchCriterionFleettrustCannotEvaluateMakesTheHostsItMayApplyToUnjudged() {
        let inventory = hosts("""
        Host a b
          HostName %h.example.com
        Match host a.example.com exec "test -f /etc/x"
          HostKeyAlgorithms ssh-ed25519
        Match final
          User someone
        """)
        XCTAssertEqual(inventory["a"]?.sshOptions.unjudged?.map(\.keyword), [#"Match exec test -f /etc/x"#])
        XCTAssertEqual(inventory["a"]?.sshOptions.unjudged?.first?.location, SourceLocation(file: "cfg", line: 3))
        XCTAssertNil(inventory["a"]?.sshOptions.hostKeyAlgorithms, "the block's settings are not guessed")
        XCTAssertNil(inventory["b"]?.sshOptions.unjudged, "its host criterion rules b out; a block setting only User changes no decision")
    }

    func testBadValuesAreFileLineErrorsAndUnjudged() {
        let inventory = hosts("""
        Host h
          HostKeyAlgorithms ssh-ed25519,no-such-algorithm
          CASignatureAlgorithms +rsa-sha2-*
          RequiredRSASize lots
          Frobnicate yes
        """)
        XCTAssertEqual(inventory.errors.map(\.description), [
            "cfg:2: HostKeyAlgorithms 'ssh-ed25519,no-such-algorithm' names no algorithm OpenSSH 9.2 knows ('no-such-algorithm'); ignored",
            "cfg:4: RequiredRSASize 'lots' is not a whole number of bits; ignored",
        ])
        XCTAssertEqual(inventory.diagnostics.filter { !inventory.errors.contains($0) }.map(\.description),
                       ["cfg:5: warning: 'frobnicate' is not an OpenSSH 9.2 keyword (ssh refuses the file unless IgnoreUnknown names it); ignored"])
        let host = inventory["h"]!
        XCTAssertEqual(host.sshOptions.unjudged?.map(\.keyword), ["HostKeyAlgorithms", "RequiredRSASize"])
        XCTAssertEqual(host.sshOptions.caSignatureAlgorithms, SSHAlgorithmList("+rsa-sha2-*"))
        XCTAssertEqual(host.sshOptions.caSignatureAlgorithms?.form, .append)
    }

    func testKnownHostsFilesExpandAsSSH92Does() throws {
        setenv("FT_TABLE_TEST_DIR", "/srv/kh", 1)
        defer { unsetenv("FT_TABLE_TEST_DIR") }
        let inventory = hosts("""
        Host Upper
          HostKeyAlias Mixed.Alias
          UserKnownHostsFile ~/kh_%k ${FT_TABLE_TEST_DIR}/%n
          GlobalKnownHostsFile ~/global_%h
        Host plain
          UserKnownHostsFile ~/kh_%k
          GlobalKnownHostsFile none
        Host nouser
          UserKnownHostsFile none
        Host unset
          UserKnownHostsFile ${FT_TABLE_TEST_UNSET}/kh
        """)
        XCTAssertEqual(inventory["Upper"]?.userKnownHostsFiles, ["/home/operator/kh_mixed.alias", "/srv/kh/Upper"],
                       "%k is the lowercased HostKeyAlias; ${VAR} comes from the environment")
        XCTAssertEqual(inventory["Upper"]?.sshOptions.globalKnownHostsFiles, ["/home/operator/global_%h"],
                       "GlobalKnownHostsFile gets ~ and no tokens")
        XCTAssertEqual(inventory["plain"]?.userKnownHostsFiles, ["/home/operator/kh_plain"], "%k without an alias is the host as typed")
        XCTAssertEqual(inventory["plain"]?.sshOptions.globalKnownHostsFiles, [], "none is no file, not a file named none")
        let nouser = try XCTUnwrap(inventory["nouser"])
        XCTAssertEqual(nouser.sshOptions.noUserKnownHostsFile, true)
        let sets = KnownHostsSets(userFiles: ["/home/operator/.ssh/known_hosts"], globalFiles: ["/etc/ssh/ssh_known_hosts"], sets: [:])
        XCTAssertEqual(sets.paths(for: nouser), ["/etc/ssh/ssh_known_hosts"])
        XCTAssertEqual(sets.saveFile(for: nouser), "", "ssh writes no file for it, so nothing may create one")
        XCTAssertEqual(inventory["unset"]?.sshOptions.unjudged?.first?.why, "ssh stops on it (${FT_TABLE_TEST_UNSET} is not set)")
    }

    func testAnsibleDashOArgumentsGoThroughTheSameTable() {
        let inventory = hosts("""
        [web]
        w1 ansible_host=10.0.0.7 ansible_ssh_common_args='-o HostKeyAlgorithms=^ssh-ed25519 -o UserKnownHostsFile=/kh/%h_%n -o CheckHostIP=yes'
        w2 ansible_ssh_extra_args='-o HostKeyAlgorithms=bogus -oKnownHostsCommand=/bin/keys'
        w3 ansible_ssh_common_args='-o GlobalKnownHostsFile=none -o RequiredRSASize=3072 -o HashKnownHosts=no'
        """, format: .ansibleINI)
        let w1 = inventory["w1"]!
        XCTAssertEqual(w1.sshOptions.hostKeyAlgorithms?.form, .prepend)
        XCTAssertEqual(w1.sshOptions.checkHostIP, true)
        XCTAssertEqual(w1.userKnownHostsFiles, ["/kh/10.0.0.7_10.0.0.7"], "ssh is run with ansible_host as its host argument")
        XCTAssertEqual(inventory.errors.map(\.description),
                       ["cfg:3: host 'w2': -o HostKeyAlgorithms 'bogus' names no algorithm OpenSSH 9.2 knows ('bogus'); ignored"])
        XCTAssertEqual(inventory["w2"]?.sshOptions.unjudged?.map(\.keyword), ["HostKeyAlgorithms", "KnownHostsCommand"])
        let w3 = inventory["w3"]!
        XCTAssertEqual(w3.sshOptions.globalKnownHostsFiles, [])
        XCTAssertEqual(w3.sshOptions.requiredRSASize, 3072)
        XCTAssertEqual(w3.sshOptions.hashKnownHosts, false)
    }

    func testAnAnsibleDashOKeywordSSHDoesNotKnowIsAWarningWithItsLine() {
        let inventory = hosts("w1 ansible_ssh_extra_args='-o Frobnicate=1 -o ForwardAgent=no'\n", format: .ansibleINI)
        XCTAssertEqual(inventory.diagnostics.map(\.description),
                       ["cfg:1: warning: host 'w1': -o 'frobnicate' is not an OpenSSH 9.2 keyword (ssh refuses it); ignored"])
    }

    func testMatchUserAndLocalUserAgreeWithSSHMinusG() throws {
        let directory = try TemporaryDirectory()
        let local = InventoryReadOptions().localUser
        let config = """
        Host u1 u2 u3
          HostName 10.0.0.9
        Host u2
          User alice
        Host u3
          User Alice
        Match user alice
          Port 2001
        Match localuser \(local)
          HostKeyAlias local-alias
        Match localuser nobody-else-*
          HostKeyAlias never
        Match !user alice
          CheckHostIP yes
        """
        let path = directory.path + "/config"
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        let inventory = InventoryFixtures.read(text: config, name: path, format: .sshConfig, options: InventoryReadOptions())
        XCTAssertEqual(inventory.diagnostics, [])
        XCTAssertEqual(inventory.hosts.count, 3)
        for host in inventory.hosts {
            XCTAssertNil(host.sshOptions.unjudged, host.name)
            let output = try Tool.run("/usr/bin/ssh", ["-F", path, "-G", host.name])
            let lines = Set(output.stdout.split(separator: "\n").map(String.init))
            XCTAssertTrue(lines.contains("port \(host.port)"), host.name)
            XCTAssertTrue(lines.contains("hostkeyalias \(host.hostKeyAlias ?? "-")"), host.name)
            XCTAssertTrue(lines.contains("checkhostip \(host.sshOptions.checkHostIP == true ? "yes" : "no")"), host.name)
        }
        XCTAssertEqual(inventory["u2"]?.port, 2001, "the user obtained so far, case-sensitive")
        XCTAssertEqual(inventory["u3"]?.port, 22)
        XCTAssertEqual(inventory["u1"]?.sshOptions.checkHostIP, true, "no User: the local user, who is not alice")
    }

    func testMatchFinalAsksForTheFinalPassWhereHostLinesMatchTheHostNameAsSSHMinusGSays() throws {
        let directory = try TemporaryDirectory()
        let config = """
        Host web
          HostName 10.0.0.9
        Match final host 10.0.0.9
          HostKeyAlias final-alias
        Match canonical
          Port 2022
        Host 10.0.0.9
          CheckHostIP yes
        Host other
          HostName 10.0.0.8
        """
        let path = directory.path + "/config"
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        let inventory = InventoryFixtures.read(text: config, name: path, format: .sshConfig, options: InventoryReadOptions())
        XCTAssertEqual(inventory.diagnostics, [])
        for host in inventory.hosts {
            XCTAssertNil(host.sshOptions.unjudged, host.name)
            let lines = Set(try Tool.run("/usr/bin/ssh", ["-F", path, "-G", host.name]).stdout.split(separator: "\n").map(String.init))
            XCTAssertTrue(lines.contains("port \(host.port)"), "\(host.name) \(host.port)")
            XCTAssertEqual(lines.first { $0.hasPrefix("hostkeyalias ") }, host.hostKeyAlias.map { "hostkeyalias \($0)" }, host.name)
            XCTAssertTrue(lines.contains("checkhostip \(host.sshOptions.checkHostIP == true ? "yes" : "no")"), host.name)
        }
        XCTAssertEqual(inventory["web"]?.port, 2022, "Match canonical holds in the final pass, which Match final asked for")
        XCTAssertEqual(inventory["web"]?.hostKeyAlias, "final-alias", "Match host sees the HostName")
        XCTAssertEqual(inventory["web"]?.sshOptions.checkHostIP, true, "in the final pass Host lines match the host name")
        XCTAssertNil(inventory["other"]?.hostKeyAlias)
    }

    func testOptionsSurviveTheJSONReportAndReplayUnchanged() throws {
        var options = SSHHostOptions(hostKeyAlgorithms: "^ssh-ed25519,rsa-sha2-512", globalKnownHostsFiles: [], checkHostIP: true,
                                     hashKnownHosts: false)
        options.caSignatureAlgorithms = "ssh-ed25519"
        options.requiredRSASize = 3072
        options.revokedHostKeys = ["/etc/ssh/revoked"]
        options.noUserKnownHostsFile = true
        options.unjudged = [UnjudgedSetting(keyword: "KnownHostsCommand", location: SourceLocation(file: "/a:b/cfg", line: 7), why: "w")]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(options)
        XCTAssertEqual(try JSONDecoder().decode(SSHHostOptions.self, from: data), options)
        let plain = String(decoding: try encoder.encode(SSHHostOptions()), as: UTF8.self)
        XCTAssertEqual(plain, #"{"check_host_ip":null,"global_known_hosts_files":null,"host_key_algorithms":null,"revoked_host_keys":null}"#,
                       "a host without the newer settings is reported exactly as before")
    }

    func testCommandLineOptionsCarryEveryJudgedSetting() {
        var options = SSHHostOptions(hostKeyAlgorithms: "ssh-ed25519,rsa-sha2-512", checkHostIP: false)
        options.caSignatureAlgorithms = "ssh-ed25519"
        options.requiredRSASize = 3072
        XCTAssertEqual(options.commandLineOptions, ["-o", "HostKeyAlgorithms=ssh-ed25519,rsa-sha2-512", "-o", "CheckHostIP=no",
                                                    "-o", "CASignatureAlgorithms=ssh-ed25519", "-o", "RequiredRSASize=3072"])
    }
}

/// The user's ssh configuration applies to hosts of every inventory format as the `ssh` the user
/// (or Ansible) runs applies it: matched against the name ssh is given, after the options on its
/// command line. `ssh -G` is the oracle for what it resolves.
final class SSHUserConfigurationTests: XCTestCase {
    func testUserConfigurationAppliesToAnsibleAndPlainHostsAsSSHMinusGResolvesThem() throws {
        let directory = try TemporaryDirectory()
        let config = directory.path + "/config"
        try """
        Host 10.0.0.7
          HostKeyAlias Web-Alias
          UserKnownHostsFile /kh/%k_%h_%p
        Host *.example.com
          HostName %h.internal
          HostKeyAlgorithms ssh-ed25519
          Port 2200
        Host 10.0.0.8
          HostKeyAlias from-config
          Port 2300
        Match host *.internal exec "true"
          CheckHostIP yes
        """.write(toFile: config, atomically: true, encoding: .utf8)
        var options = InventoryFixtures.options
        let (configuration, diagnostics) = try SSHUserConfiguration.read(files: [config], options: options)
        XCTAssertEqual(diagnostics.map(\.description), [], "Match exec is evaluated (here without a runner: unchecked)")
        options.sshConfiguration = configuration
        let ansible = InventoryFixtures.read(text: """
        w1 ansible_host=10.0.0.7
        w2 ansible_host=10.0.0.8 ansible_port=2222 ansible_ssh_common_args='-o HostKeyAlias=from-args'
        """, format: .ansibleINI, options: options)
        let plain = InventoryFixtures.read(text: "a.example.com\nb.example.com:2222\n", format: .plain, options: options)
        XCTAssertEqual(ansible.diagnostics, [])

        // Ansible runs `ssh -o Port=P -o User=U ARGS ansible_host`; a plain host is `ssh [-p P] HOST`.
        let cases: [(InventoryHost, [String])] = [
            (ansible["w1"]!, ["10.0.0.7"]),
            (ansible["w2"]!, ["-o", "Port=2222", "-o", "HostKeyAlias=from-args", "10.0.0.8"]),
            (plain["a.example.com"]!, ["a.example.com"]),
            (plain["b.example.com:2222"]!, ["-p", "2222", "b.example.com"]),
        ]
        for (host, arguments) in cases {
            let output = try Tool.run("/usr/bin/ssh", ["-F", config, "-G"] + arguments)
            var oracle: [String: String] = [:]
            for line in output.stdout.split(separator: "\n") {
                let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
                if parts.count == 2, oracle[parts[0]] == nil { oracle[parts[0]] = parts[1] }
            }
            XCTAssertEqual(host.address, oracle["hostname"], host.name)
            XCTAssertEqual(String(host.port), oracle["port"], host.name)
            XCTAssertEqual(host.hostKeyAlias?.lowercased(), oracle["hostkeyalias"], host.name)
            if !host.userKnownHostsFiles.isEmpty {
                XCTAssertEqual(host.userKnownHostsFiles.joined(separator: " "), oracle["userknownhostsfile"], host.name)
            }
            let algorithms = try HostKeyAlgorithms.assemble(host.sshOptions.hostKeyAlgorithms).joined(separator: ",")
            XCTAssertEqual(algorithms, oracle["hostkeyalgorithms"], host.name)
        }
        XCTAssertEqual(ansible["w1"]?.userKnownHostsFiles, ["/kh/web-alias_10.0.0.7_22"])
        XCTAssertEqual(plain["a.example.com"]?.sshOptions.unjudged?.map(\.keyword), [#"Match exec true"#],
                       "a block behind an exec criterion may apply to it")
        XCTAssertNil(ansible["w1"]?.sshOptions.unjudged, "its host criterion rules the other hosts out")
    }
}
