import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// Hosts behind bastions, against real `sshd`s: bastions on 127.0.0.2 that admit one client key
/// and log every forwarded channel (`LogLevel DEBUG1`), a target listening on 127.0.0.3. The
/// client's ssh_config, key and known_hosts are the test's own files (`ssh -F`, `IdentitiesOnly`,
/// `IdentityAgent none`): nothing of the real ~/.ssh is read.
final class BastionRouteTests: XCTestCase {
    private var directory = ""
    private var identity = ""
    private var otherIdentity = ""
    private var bastion: LabSSHD!
    private var target: LabSSHD!

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "ft-bastions-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        identity = directory + "/id_ed25519"
        otherIdentity = directory + "/other_ed25519"
        try KeyFiles.generate(type: "ed25519", path: identity)
        try KeyFiles.generate(type: "ed25519", path: otherIdentity)
        bastion = try LabSSHD(address: "127.0.0.2", authorizedKey: clientKey, in: directory)
        target = try LabSSHD(address: "127.0.0.3", in: directory)
    }

    override func tearDown() {
        bastion?.stop()
        target?.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private var clientKey: String { (try? KeyFiles.line(publicKeyFile: identity + ".pub")) ?? "" }
    private var knownHosts: String { directory + "/known_hosts" }
    private var config: String { directory + "/ssh_config" }

    /// `Host` blocks for the bastions and the hosts behind them, then the client defaults.
    private func writeConfig(_ blocks: [String]) throws {
        let defaults = """
            Host * !stranger-bastion
              IdentityFile \(identity)
            Host *
              User root
              IdentitiesOnly yes
              IdentityAgent none
              UserKnownHostsFile \(knownHosts)
              GlobalKnownHostsFile /dev/null
            """
        try ((blocks + [defaults]).joined(separator: "\n") + "\n").write(toFile: config, atomically: true, encoding: .utf8)
    }

    private func block(_ alias: String, _ server: LabSSHD, _ extra: String...) -> String {
        (["Host \(alias)", "  HostName \(server.address)", "  Port \(server.port)"] + extra.map { "  " + $0 }).joined(separator: "\n")
    }

    private func scan(_ arguments: [String]) throws -> (ProgramRun, [String: RecordedScan.Host]) {
        // These inventories are the lab's own ssh configuration: their ProxyCommands are allowed to run.
        let run = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "json", "--known-hosts", knownHosts,
                                                                 "--allow-inventory-proxy-command"] + arguments,
                                     limit: 90)
        let document = try RecordedScan.decode(Data(run.stdout))
        return (run, Dictionary(uniqueKeysWithValues: document.hosts.map { ($0.name, $0) }))
    }

    func testProxyJumpProvesTheTargetsKeysThroughOneBastionLoginAndEveryConnectionGoesThroughIt() throws {
        try (bastion.knownHostsLines + target.knownHostsLines).write(toFile: knownHosts, atomically: true, encoding: .utf8)
        let names = (1...12).map { "web\($0)" }
        try writeConfig([block("bastion", bastion)] + names.map { block($0, target, "ProxyJump bastion") })
        let (run, hosts) = try scan(["--inventory", config])
        XCTAssertEqual(run.status, 0, run.stderrText)
        for name in ["bastion"] + names { XCTAssertEqual(hosts[name]?.status, .trusted, "\(name): \(String(describing: hosts[name]))") }
        for name in names {
            XCTAssertEqual(Set(hosts[name]?.keys.map(\.key) ?? []), Set(target.publicKeys.map(\.openSSHLine)), name)
        }
        XCTAssertEqual(hosts["web1"]?.route, [ScanReport.Hop(kind: "proxy-jump", hop: "bastion")])
        XCTAssertEqual(hosts["bastion"]?.route, [], "the bastion itself is probed directly, as ssh reaches it")
        XCTAssertNil(hosts["web1"]?.address, "behind a bastion the peer address is not known here")
        XCTAssertEqual(Set(hosts["web1"]?.keys.map(\.key) ?? []), Set(target.publicKeys.map(\.openSSHLine)))
        XCTAssertEqual(bastion.acceptedLogins, 1, "one login on the bastion for the whole scan:\n\(bastion.log)")
        let forwarded = bastion.forwardRequests(to: target.address, port: target.port)
        XCTAssertGreaterThanOrEqual(forwarded, 24, "twelve hosts, two key types each, through the bastion")
        XCTAssertEqual(target.connections, forwarded, "every connection to the target came through the bastion")
        XCTAssertEqual(routeProcesses(), [], "the scan stopped its control master and channels")
        XCTAssertTrue(waitUntil { self.bastion.log.contains("Disconnected from user root") },
                      "the master logged out as the scan ended:\n\(bastion.log)")
    }

    /// The dashboard keeps its bastion's master for the whole session: the first scan logs in,
    /// every rescan (`R`) goes through the same login, and quitting stops the master at once
    /// (sooner than it would end by itself once fleettrust's connection to it closed).
    func testTheDashboardLogsInToTheBastionOnceForTheSessionAndStopsTheMasterWhenItQuits() throws {
        try (bastion.knownHostsLines + target.knownHostsLines).write(toFile: knownHosts, atomically: true, encoding: .utf8)
        try writeConfig([block("bastion", bastion), block("web1", target, "ProxyJump bastion"),
                         block("web2", target, "ProxyJump bastion")])
        let terminal = try DashboardTmux(arguments: ["--inventory", config, "--known-hosts", knownHosts,
                                                     "--audit-log", directory + "/audit.jsonl"])
        defer { terminal.stop() }
        let (listed, screen) = terminal.waitFor { Self.routedRowsTrusted($0) == 2 }
        XCTAssertTrue(listed, screen)
        let masters = BastionLogins.processes(holdingLoginsOn: bastion)
        XCTAssertEqual(masters.map(\.command), ["ssh"], "one control master holds the login:\n\(bastion.log)")
        for round in 1...2 {
            let before = bastion.forwardRequests(to: target.address, port: target.port)
            rescan(terminal, until: before + 4)
            XCTAssertGreaterThanOrEqual(bastion.forwardRequests(to: target.address, port: target.port), before + 4,
                                        "rescan \(round) probed both hosts through the bastion again: \(terminal.capture())")
        }
        XCTAssertTrue(terminal.waitFor { Self.routedRowsTrusted($0) == 2 }.0, terminal.capture())
        XCTAssertEqual(bastion.acceptedLogins, 1, "one login for the session and its rescans:\n\(bastion.log)")
        XCTAssertEqual(BastionLogins.processes(holdingLoginsOn: bastion).map(\.pid), masters.map(\.pid), "the same master throughout")
        XCTAssertEqual(target.connections, bastion.forwardRequests(to: target.address, port: target.port))
        terminal.send("q")
        XCTAssertTrue(terminal.waitFor { $0.contains(DashboardTmux.exitMarker + "0") }.0, terminal.capture())
        let quit = Date()
        XCTAssertEqual(DashboardTmux.waitUntilGone(masters, timeout: 10).map(\.pid), [], "the master stopped with the dashboard")
        XCTAssertLessThan(Date().timeIntervalSince(quit), 1.5, "asked to stop, not left to time out")
    }

    /// Presses `R` until the bastion has logged `channels` forward requests to the target (for at
    /// most 20 s): `R` skips hosts still being scanned, so it is sent again every 2 s.
    private func rescan(_ terminal: DashboardTmux, until channels: Int) {
        let deadline = Date().addingTimeInterval(20)
        var sent = Date.distantPast
        while bastion.forwardRequests(to: target.address, port: target.port) < channels && Date() < deadline {
            if Date().timeIntervalSince(sent) > 2 {
                terminal.send("R")
                sent = Date()
            }
            usleep(50_000)
        }
    }

    /// The dashboard on one target behind the bastion, once that target's row is trusted.
    private func dashboardWithOneTargetBehindTheBastion() throws -> DashboardTmux {
        try (bastion.knownHostsLines + target.knownHostsLines).write(toFile: knownHosts, atomically: true, encoding: .utf8)
        try writeConfig([block("bastion", bastion), block("web1", target, "ProxyJump bastion")])
        let terminal = try DashboardTmux(arguments: ["--inventory", config, "--known-hosts", knownHosts,
                                                     "--audit-log", directory + "/audit.jsonl"])
        let (listed, screen) = terminal.waitFor { Self.routedRowsTrusted($0) == 1 }
        XCTAssertTrue(listed, screen)
        return terminal
    }

    /// A master that ends during the session (the bastion dropped the connection) is not a dead
    /// end: the next rescan logs in again and the hosts behind it are proved as before.
    func testARescanAfterTheMasterEndedLogsInAgain() throws {
        let terminal = try dashboardWithOneTargetBehindTheBastion()
        defer { terminal.stop() }
        let first = BastionLogins.processes(holdingLoginsOn: bastion)
        XCTAssertEqual(first.map(\.command), ["ssh"])
        for master in first { kill(master.pid, SIGTERM) }
        XCTAssertEqual(DashboardTmux.waitUntilGone(first, timeout: 10).map(\.pid), [])
        rescan(terminal, until: bastion.forwardRequests(to: target.address, port: target.port) + 2)
        XCTAssertTrue(terminal.waitFor { Self.routedRowsTrusted($0) == 1 && !$0.contains("scanning") }.0, terminal.capture())
        XCTAssertEqual(bastion.acceptedLogins, 2, "one login, then one more after the master ended:\n\(bastion.log)")
        let second = BastionLogins.processes(holdingLoginsOn: bastion)
        XCTAssertEqual(second.count, 1)
        XCTAssertNotEqual(second.map(\.pid), first.map(\.pid))
    }

    /// A fleettrust killed with SIGKILL cannot stop anything, yet its master does not outlive it:
    /// the kernel closes fleettrust's connection to the master, which then ends by itself within
    /// its persist time (2 s), taking its login on the bastion with it.
    func testTheMasterEndsByItselfWhenFleettrustIsKilled() throws {
        let terminal = try dashboardWithOneTargetBehindTheBastion()
        defer { terminal.stop() }
        let masters = BastionLogins.processes(holdingLoginsOn: bastion)
        XCTAssertEqual(masters.map(\.command), ["ssh"], "one control master holds the login:\n\(bastion.log)")
        let dashboard = terminal.childPIDs.filter { DashboardTmux.command(of: $0) == "fleettrust" }
        XCTAssertEqual(dashboard.count, 1)
        for pid in dashboard { kill(pid, SIGKILL) }
        XCTAssertTrue(terminal.waitFor { $0.contains(DashboardTmux.exitMarker + "137") }.0, terminal.capture())
        let killed = Date()
        XCTAssertEqual(DashboardTmux.waitUntilGone(masters, timeout: 10).map(\.pid), [], "the master outlived fleettrust")
        XCTAssertLessThan(Date().timeIntervalSince(killed), 4, "gone within its persist time (2 s) and a margin")
        XCTAssertEqual(BastionLogins.processes(holdingLoginsOn: bastion).count, 0, "no login left open on the bastion")
    }

    /// Rows of the dashboard's list shown behind the bastion and trusted.
    static func routedRowsTrusted(_ screen: String) -> Int {
        screen.split(separator: "\n").filter { $0.contains("via bastion") && $0.contains("trusted") }.count
    }

    /// Polls `condition` for up to 3 s.
    func waitUntil(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(3)
        while !condition() {
            if Date() > deadline { return false }
            usleep(20_000)
        }
        return true
    }

    /// Command lines of this test's processes still using a route directory (control masters,
    /// channels). Only this test's own ssh_config counts: other tests run beside it in parallel
    /// and have masters of their own. A process being reaped gets up to 3 s to go.
    func routeProcesses() -> [String] {
        let deadline = Date().addingTimeInterval(3)
        while true {
            let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            let left = pids.filter { $0.allSatisfy(\.isNumber) }.compactMap { pid -> String? in
                guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
                let line = String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
                return line.contains("/tmp/fleettrust-routes-") && line.contains(directory) ? line : nil
            }
            if left.isEmpty || Date() > deadline { return left }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    func testTwoHopChainProxyCommandAndAnsibleJumpArgumentsAllReachTheTarget() throws {
        let second = try LabSSHD(address: "127.0.0.2", authorizedKey: clientKey, in: directory)
        defer { second.stop() }
        try (bastion.knownHostsLines + second.knownHostsLines + target.knownHostsLines)
            .write(toFile: knownHosts, atomically: true, encoding: .utf8)
        try writeConfig([block("bastion", bastion), block("inner", second),
                         block("deep", target, "ProxyJump bastion,inner"),
                         block("viacommand", target, "ProxyCommand /usr/bin/ssh -F \(config) -W %h:%p bastion")])
        let ansible = directory + "/hosts.ini"
        try "app ansible_host=\(target.address) ansible_port=\(target.port) ansible_ssh_common_args='-J inner'\n"
            .write(toFile: ansible, atomically: true, encoding: .utf8)
        let (run, hosts) = try scan(["--inventory", config, "--inventory", ansible, "--ssh-config", config])
        XCTAssertEqual(run.status, 0, run.stderrText)
        for name in ["deep", "viacommand", "app"] { XCTAssertEqual(hosts[name]?.status, .trusted, "\(name): \(String(describing: hosts[name]))") }
        XCTAssertEqual(hosts["deep"]?.route.map(\.hop), ["bastion", "inner"])
        XCTAssertEqual(hosts["viacommand"]?.route.map(\.kind), ["proxy-command"])
        XCTAssertEqual(hosts["app"]?.route, [ScanReport.Hop(kind: "proxy-jump", hop: "inner")])
        XCTAssertEqual(second.acceptedLogins, 2, "inner: once for the chain, once on its own (-J inner): one master each")
        XCTAssertGreaterThanOrEqual(second.forwardRequests(to: target.address, port: target.port), 4)
        XCTAssertGreaterThanOrEqual(bastion.forwardRequests(to: second.address, port: second.port), 1, "the chain passed bastion first")
        let forwarded = bastion.forwardRequests(to: target.address, port: target.port)
            + second.forwardRequests(to: target.address, port: target.port)
        XCTAssertEqual(target.connections, forwarded, "every connection to the target came through a bastion")
    }

    func testEveryBrokenRouteIsStageProxyWithItsCodeAndNothingReachesTheTarget() throws {
        let noForwarding = try LabSSHD(address: "127.0.0.2", authorizedKey: clientKey, extraConfig: ["AllowTcpForwarding no"], in: directory)
        let elsewhere = try LabSSHD(address: "127.0.0.2", authorizedKey: clientKey, extraConfig: ["PermitOpen 127.0.0.3:1"], in: directory)
        defer { noForwarding.stop(); elsewhere.stop() }
        let (silent, silentPort) = try Loopback.listeningSocket(address: "127.0.0.2", backlog: 8)
        defer { close(silent) }
        let changed = try TestFleet.throwawayKey(in: directory)
        try (bastion.knownHostsLines + noForwarding.knownHostsLines + elsewhere.knownHostsLines + target.knownHostsLines
             + "changed-bastion \(changed.openSSHLine)\n").write(toFile: knownHosts, atomically: true, encoding: .utf8)
        try writeConfig([
            block("changed-bastion", bastion, "HostKeyAlias changed-bastion"),
            block("stranger-bastion", bastion, "IdentityFile \(otherIdentity)"),
            block("no-forwarding", noForwarding), block("elsewhere", elsewhere),
            "Host silent-hop\n  HostName 127.0.0.2\n  Port \(silentPort)",
            block("t-changed", target, "ProxyJump changed-bastion"), block("t-stranger", target, "ProxyJump stranger-bastion"),
            block("t-noforward", target, "ProxyJump no-forwarding"), block("t-elsewhere", target, "ProxyJump elsewhere"),
            block("t-command", target, "ProxyCommand sh -c 'echo refused by policy >&2; exit 1'"),
            block("t-silent", target, "ProxyJump silent-hop"),
        ])
        let (run, hosts) = try scan(["--inventory", config, "--timeout", "2"])
        let expected: [String: (FailureCode, String)] = [
            "t-changed": (.bastionKeyNotTrusted, "changed-bastion"), "t-stranger": (.bastionAuthFailed, "stranger-bastion"),
            "t-noforward": (.forwardingRefused, "no-forwarding"), "t-elsewhere": (.forwardingRefused, "elsewhere"),
            "t-command": (.proxyCommandFailed, "exit"), "t-silent": (.hopUnreachable, "silent-hop"),
        ]
        for (name, (code, named)) in expected {
            let error = hosts[name]?.error
            XCTAssertEqual(error?.stage, "proxy", "\(name): \(String(describing: hosts[name]))\n\(run.stderrText)")
            XCTAssertEqual(error?.code, code, "\(name): \(error?.message ?? "")")
            XCTAssertTrue(error?.message.contains(named) ?? false, "\(name) names its hop: \(error?.message ?? "")")
            XCTAssertEqual(hosts[name]?.keys.count, 0)
        }
        XCTAssertTrue(hosts["t-command"]?.error?.message.contains("status 1 before the host spoke SSH (refused by policy)") ?? false,
                      "the command ran through the shell as written, quotes and all: \(hosts["t-command"]?.error?.message ?? "")")
        XCTAssertEqual(hosts["t-silent"]?.status, .unreachable)
        XCTAssertEqual(hosts["t-changed"]?.status, .error)
        XCTAssertEqual(target.connections, 0, "nothing reached the target:\n\(target.log)")
        XCTAssertEqual(bastion.forwardRequests(to: target.address, port: target.port), 0)
        XCTAssertEqual(hosts["changed-bastion"]?.status, .changed, "the bastion's own row says what ssh says of it")
        XCTAssertEqual(run.status, 2)
        XCTAssertEqual(routeProcesses(), [], "no master or channel outlives the scan")
        XCTAssertLessThan(run.seconds, 30, "a silent hop costs one timeout")
    }

    /// The dashboard shows the route and connect takes it: the real `ssh` reaches the target
    /// through the bastion (which logs one more forwarded channel) and accepts the key the probe
    /// proved, then stops at login (the target admits nobody).
    func testTheDashboardMarksTheRouteAndConnectGoesThroughTheBastion() throws {
        try (bastion.knownHostsLines + target.knownHostsLines).write(toFile: knownHosts, atomically: true, encoding: .utf8)
        try writeConfig([block("bastion", bastion)])
        let ansible = directory + "/hosts.ini"
        try "app ansible_host=\(target.address) ansible_port=\(target.port) ansible_ssh_common_args='-J bastion'\n"
            .write(toFile: ansible, atomically: true, encoding: .utf8)
        let log = directory + "/connect.log"
        let wrapper = directory + "/connect.sh"
        try """
            #!/bin/sh
            echo "args: $*" > '\(log)'
            ssh -o BatchMode=yes "$@" true 2>> '\(log)'
            echo "exit=$?" >> '\(log)'
            """.write(toFile: wrapper, atomically: true, encoding: .utf8)
        chmod(wrapper, 0o755)
        let terminal = try DashboardTmux(arguments: ["--inventory", ansible, "--ssh-config", config, "--known-hosts", knownHosts,
                                                     "--audit-log", directory + "/audit.jsonl",
                                                     "--connect-command", "\(wrapper) {options} -p {port} {target}"])
        defer { terminal.stop() }
        let (listed, screen) = terminal.waitFor { $0.contains("via bastion") && $0.contains("trusted") }
        XCTAssertTrue(listed, screen)
        let before = bastion.forwardRequests(to: target.address, port: target.port)
        terminal.send("c")
        XCTAssertTrue(terminal.waitFor { _ in ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("exit=") }.0,
                      terminal.capture())
        let transcript = try String(contentsOfFile: log, encoding: .utf8)
        XCTAssertTrue(transcript.contains("-F \(config)") && transcript.contains("-J bastion"), transcript)
        XCTAssertTrue(transcript.contains("Permission denied"), "the host key was accepted; only the login failed: \(transcript)")
        XCTAssertEqual(bastion.forwardRequests(to: target.address, port: target.port), before + 1, transcript)
    }
}
