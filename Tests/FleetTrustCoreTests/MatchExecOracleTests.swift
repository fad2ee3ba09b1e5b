import Foundation
import XCTest
import FleetTrustTestFleet
@testable import FleetTrustCore

/// `Match exec` from the user's own configuration evaluated as `ssh` 9.2 evaluates it, with the
/// real `ssh -G` (which runs the commands too) as the oracle: each command appends what its shell
/// saw to a log named by `$LOG`, so the two logs say exactly which commands ran, in which order,
/// in how many passes, with which tokens; the settings the blocks decide are compared too. Hostile
/// names, endless, forking, chatty and crashing commands, and commands an inventory names attack
/// the runner.
final class MatchExecOracleTests: XCTestCase {
    private var scratch: TemporaryDirectory!

    override func setUpWithError() throws {
        scratch = try TemporaryDirectory()
    }

    override func tearDown() {
        scratch = nil
    }

    private var directory: String { scratch.path }

    private func path(_ name: String) -> String { directory + "/" + name }

    /// The environment both `ssh` and fleettrust's runner give the commands.
    private func environment(log: String, shell: String = "/bin/sh") -> [String: String] {
        ["LOG": path(log), "DIR": directory, "SHELL": shell, "PATH": "/usr/bin:/bin", "HOME": InventoryReadOptions().homeDirectory]
    }

    private func log(_ name: String) -> String { (try? String(contentsOfFile: path(name), encoding: .utf8)) ?? "" }

    /// The user's configuration `text`, read with a runner (or none), as a plain list's hosts see it.
    private func read(_ text: String, hosts: String, runner: MatchExecRunner?) throws -> (Inventory, [InventoryDiagnostic]) {
        let config = path("config")
        try text.write(toFile: config, atomically: true, encoding: .utf8)
        var options = InventoryReadOptions()
        let (configuration, diagnostics) = try SSHUserConfiguration.read(files: [config], options: options)
        options.sshConfiguration = configuration
        options.matchExecRunner = runner
        return (InventoryFixtures.read(text: hosts, format: .plain, options: options), diagnostics)
    }

    /// `ssh -G` under the same configuration: its settings, or nil when it refuses.
    private func oracle(_ arguments: [String], environment: [String: String]) throws -> [String: String]? {
        let output = try Tool.run("/usr/bin/ssh", ["-F", path("config"), "-G"] + arguments, environment: environment)
        guard output.status == 0 else { return nil }
        var settings: [String: String] = [:]
        for line in output.stdout.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            if parts.count == 2, settings[parts[0]] == nil { settings[parts[0]] = parts[1] }
        }
        return settings
    }

    func testTheShellSeesWhatItSeesUnderTheRealSshInEveryPass() throws {
        let config = """
            Host web db
              HostName %h.Internal
            Host db
              Port 2222
              User alice
            Match exec "echo 'first %C %L %d %h %i %k %l %n %p %r %u %%' >> $LOG"
              HostKeyAlias alias-one
            Match exec "echo 'then %k %p' >> $LOG"
              UserKnownHostsFile /kh/%k
            Match originalhost nomatch exec "echo skipped-after-a-failed-criterion >> $LOG"
              Port 1
            Match exec "echo 'runs, then fails %n' >> $LOG; exit 3" originalhost web
              Port 2
            Match !exec "exit 4" originalhost db
              CheckHostIP yes
            Match final exec "echo 'final %h' >> $LOG"
              RequiredRSASize 3072

            """
        let (inventory, diagnostics) = try read(config, hosts: "web\ndb\n", runner: MatchExecRunner(environment: environment(log: "ours")))
        XCTAssertEqual(diagnostics, [])
        for name in ["web", "db"] {
            try? FileManager.default.removeItem(atPath: path("ssh"))
            try? FileManager.default.removeItem(atPath: path("ours"))
            _ = try read(config, hosts: name + "\n", runner: MatchExecRunner(environment: environment(log: "ours")))
            let ssh = try XCTUnwrap(try oracle([name], environment: environment(log: "ssh")), name)
            XCTAssertEqual(log("ours"), log("ssh"), "\(name): the commands ssh ran, in order, as its shell saw them")
            XCTAssertTrue(log("ssh").contains("final"), "\(name): the final pass ran its commands again:\n\(log("ssh"))")
            let host = try XCTUnwrap(inventory[name])
            XCTAssertNil(host.sshOptions.unjudged, name)
            XCTAssertEqual(host.hostKeyAlias, ssh["hostkeyalias"], name)
            XCTAssertEqual(host.userKnownHostsFiles.joined(separator: " "), ssh["userknownhostsfile"], name)
            XCTAssertEqual(String(host.port), ssh["port"], name)
            XCTAssertEqual(host.sshOptions.checkHostIP ?? false, ssh["checkhostip"] == "yes", name)
            XCTAssertEqual(host.sshOptions.requiredRSASize.map(String.init), ssh["requiredrsasize"], name)
        }
    }

    func testACommandSshStopsOnOrThatNeverEndsLeavesTheHostUncheckedNamingIt() throws {
        let cases: [(command: String, why: String)] = [
            ("kill -9 $$", "ssh stops: the command was ended by signal 9"),
            ("echo %j", "unknown token %j"),
        ]
        for (command, why) in cases {
            let config = "Match exec \"\(command)\"\n  HostKeyAlias decided\n"
            let (inventory, _) = try read(config, hosts: "web\n", runner: MatchExecRunner(environment: environment(log: "ours")))
            XCTAssertNil(try oracle(["web"], environment: environment(log: "ssh")), "\(command): the real ssh stops")
            let unjudged = try XCTUnwrap(inventory["web"]?.sshOptions.unjudged?.first, command)
            XCTAssertTrue(unjudged.description.contains(why), "\(command): \(unjudged)")
            XCTAssertEqual(unjudged.location?.line, 1, command)
        }
        let shellless = "Match exec true\n  HostKeyAlias decided\n"
        let (inventory, _) = try read(shellless, hosts: "web\n", runner: MatchExecRunner(environment: environment(log: "ours", shell: "/nonexistent/sh")))
        XCTAssertNil(try oracle(["web"], environment: environment(log: "ssh", shell: "/nonexistent/sh")), "ssh stops without its shell")
        XCTAssertEqual(inventory["web"]?.sshOptions.unjudged?.first?.keyword, "Match exec true")
        XCTAssertNil(inventory["web"]?.hostKeyAlias)

        let started = ContinuousClock.now
        let endless = "Match exec \"echo $$ > $DIR/endless; exec sleep 60\"\n  HostKeyAlias decided\n"
        let (slow, _) = try read(endless, hosts: "web\n", runner: MatchExecRunner(timeout: .seconds(1), environment: environment(log: "ours")))
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5), "bounded in time")
        XCTAssertEqual(slow["web"]?.sshOptions.unjudged?.first?.why, "the command did not finish within 1 s (fleettrust waits no longer)")
        XCTAssertNil(slow["web"]?.hostKeyAlias)
        try assertGone(pidFile: "endless")
    }

    func testForkingAndChattyCommandsAnswerByTheirExitStatusAndLeaveNothingRunning() throws {
        let config = """
            Match exec "sleep 60 & echo $! > $DIR/child; exit 0"
              HostKeyAlias forked
            Match exec "head -c 20000000 /dev/zero; head -c 20000000 /dev/zero >&2; true"
              UserKnownHostsFile /kh/chatty

            """
        let started = ContinuousClock.now
        let (inventory, _) = try read(config, hosts: "web\n", runner: MatchExecRunner(timeout: .seconds(3), environment: environment(log: "ours")))
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(3), "neither the child left behind nor the output holds the run up")
        XCTAssertEqual(inventory["web"]?.hostKeyAlias, "forked")
        XCTAssertEqual(inventory["web"]?.userKnownHostsFiles, ["/kh/chatty"])
        try assertGone(pidFile: "child")
    }

    /// The process whose PID the command wrote is gone (or a zombie waiting for its reaper).
    private func assertGone(pidFile: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let pid = try XCTUnwrap(Int32(log(pidFile).trimmingCharacters(in: .whitespacesAndNewlines)), file: file, line: line)
        let deadline = ContinuousClock.now + .seconds(2)
        while ContinuousClock.now < deadline {
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            if stat.isEmpty || stat.contains(") Z ") { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        XCTFail("process \(pid) is still running", file: file, line: line)
    }

    func testHostileNamesNeverReachTheShell() throws {
        let config = "Match exec \"echo ran %h %n %r >> $LOG\"\n  HostKeyAlias decided\n"
        try config.write(toFile: path("config"), atomically: true, encoding: .utf8)
        var options = InventoryReadOptions()
        let configuration = try SSHUserConfiguration.read(files: [path("config")], options: options).0
        options.sshConfiguration = configuration
        options.matchExecRunner = MatchExecRunner(environment: environment(log: "ours"))
        let names = ["a;touch${IFS}$DIR/pwned", "a$(touch${IFS}$DIR/pwned)", "a`touch${IFS}$DIR/pwned`", "a\ntouch${IFS}$DIR/pwned", "a|b", "a&b"]
        let destinations = names.map { ($0, nil as String?) } + [("web", "u;touch${IFS}$DIR/pwned"), ("web", "u$(touch${IFS}$DIR/pwned)")]
        for (name, user) in destinations {
            let ssh = try oracle([user.map { "\($0)@\(name)" } ?? name], environment: environment(log: "ssh"))
            XCTAssertNil(ssh, "\(name) \(user ?? ""): the real ssh refuses it")
            let host = configuration.host(InventoryHost(name: "h", address: name, user: user), port: nil, options: options)
            XCTAssertNotNil(host.refusal, "\(name) \(user ?? ""): refused")
            XCTAssertEqual(host.sshOptions.unjudged?.first?.why.hasPrefix("not run: "), true, "\(name) \(user ?? "")")
        }
        // Ansible's `-o HostName=`, which the real ssh would paste into its shell as it is.
        let ansible = InventoryFixtures.read(text: #"w ansible_ssh_common_args='-o HostName=x$(touch${IFS}$DIR/pwned)'"# + "\n",
                                             format: .ansibleINI, options: options)
        XCTAssertNotNil(ansible["w"]?.refusal)
        XCTAssertEqual(ansible["w"]?.sshOptions.unjudged?.first?.why.hasPrefix("not run: "), true)
        XCTAssertEqual(log("ours"), "", "nothing ran")
        XCTAssertEqual(log("ssh"), "", "the real ssh ran nothing either")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("pwned")))
    }

    func testACommandAnInventoryNamesIsNeverRun() throws {
        var options = InventoryReadOptions()
        options.matchExecRunner = MatchExecRunner(environment: environment(log: "ours"))
        let inventory = InventoryFixtures.read(text: "Host web\n  Port 22\nMatch exec \"echo ran >> $LOG\"\n  HostKeyAlias decided\n",
                                               name: "inventory", format: .sshConfig, options: options)
        XCTAssertEqual(inventory["web"]?.sshOptions.unjudged?.map(\.keyword), ["Match exec echo ran >> $LOG"])
        XCTAssertEqual(inventory["web"]?.sshOptions.unjudged?.first?.why, "the inventory sets it, and fleettrust never runs a command an inventory names")
        var replay = options
        replay.matchExecRunner = nil
        try "Match exec \"echo ran >> $LOG\"\n  HostKeyAlias decided\n".write(toFile: path("config"), atomically: true, encoding: .utf8)
        replay.sshConfiguration = try SSHUserConfiguration.read(files: [path("config")], options: replay).0
        let replayed = replay.sshConfiguration!.recorded(InventoryHost(name: "web", address: "web"), options: replay)
        XCTAssertEqual(replayed.sshOptions.unjudged?.map(\.keyword), ["Match exec echo ran >> $LOG"])
        // Ansible's `-o`: `ssh` refuses `Match` there ("not supported as a command-line option").
        let ansible = InventoryFixtures.read(text: #"w ansible_ssh_common_args='-o "Match exec true"'"# + "\n", format: .ansibleINI, options: options)
        XCTAssertEqual(ansible["w"]?.sshOptions.unjudged?.map(\.keyword), ["Match"])
        XCTAssertEqual(try Tool.run("/usr/bin/ssh", ["-F", "/dev/null", "-G", "-o", "Match exec true", "w"]).status, 255)
        XCTAssertEqual(log("ours"), "", "nothing ran")
    }
}
