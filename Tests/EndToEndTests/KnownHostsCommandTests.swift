import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// `KnownHostsCommand` from the user's own ssh configuration (`--ssh-config`) is run as `ssh` runs
/// it and its lines judged with the files: a real sshd on loopback, a shell-script command that
/// logs its arguments and prints known_hosts lines, and the real `ssh -F config -o
/// StrictHostKeyChecking=yes` with the same configuration and the same script as the oracle, both
/// for the verdict and for the arguments the script receives. A command an inventory names is
/// never run.
final class KnownHostsCommandTests: XCTestCase {
    private var scratch = ""

    override func setUpWithError() throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("ft-khcmd-\(getpid())-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: scratch)
    }

    private func path(_ name: String) -> String { scratch + "/" + name }

    private func write(_ name: String, _ text: String, executable: Bool = false) throws -> String {
        try text.write(toFile: path(name), atomically: true, encoding: .utf8)
        if executable { chmod(path(name), 0o755) }
        return path(name)
    }

    /// Each logged run of the script, one line per run: the mode, then each argument after a tab.
    private func loggedRuns(_ mode: String) -> [String] {
        let text = (try? String(contentsOfFile: path("argv-\(mode).log"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    func testUserKnownHostsCommandIsJudgedAsTheRealSshJudgesItWithTheSameArguments() throws {
        let sshd = try LoopbackSSHD()
        defer { sshd.stop() }
        let ed = try XCTUnwrap(sshd.key(ofType: "ssh-ed25519"))
        let ecdsa = try XCTUnwrap(sshd.key(ofType: "ecdsa-sha2-nistp256"))
        try KeyFiles.generate(type: "ed25519", bits: nil, path: path("spare"))
        let spare = try HostKey(openSSHLine: String(contentsOfFile: path("spare.pub"), encoding: .utf8))
        let name = "[127.0.0.1]:\(sshd.port)"
        _ = try write("lines-exact", "# from the command\n\(name) \(ed.openSSHLine)\n")
        _ = try write("lines-explicit", "\(name) \(ed.openSSHLine)\n")
        _ = try write("lines-md5", "\(name) \(ed.openSSHLine)\n")
        _ = try write("lines-other", "\(name) \(spare.openSSHLine)\n")
        // ssh 9.2 matches the ORDER run's lines against the bare host name, the others against [host]:port.
        _ = try write("lines-order", "127.0.0.1 \(ecdsa.openSSHLine)\n\(name) \(ecdsa.openSSHLine)\n")
        let script = try write("kh.sh", """
            #!/bin/sh
            mode="$1"; shift
            { printf '%s' "$mode"; for a in "$@"; do printf '\\t%s' "$a"; done; printf '\\n'; } >> \(scratch)/argv-$mode.log
            [ "$mode" = fail ] && exit 1
            [ "$mode" = explicit ] && [ "$2" = ORDER ] && exit 1
            cat \(scratch)/lines-$mode 2>/dev/null
            exit 0

            """, executable: true)
        let knownHosts = try write("known_hosts", "")
        // explicit: HostKeyAlgorithms as a list, so ssh does not reorder and never runs ORDER (which would fail).
        // md5: FingerprintHash changes the %f the command is given.
        let modes = ["exact", "other", "nothing", "order", "fail", "explicit", "md5"]
        var config = """
            Host kh-*
              HostName 127.0.0.1
              Port \(sshd.port)
              User fleettrust-oracle
              UserKnownHostsFile \(knownHosts)
              GlobalKnownHostsFile /dev/null

            """
        for mode in modes {
            if mode == "explicit" { config += "Host kh-explicit\n  HostKeyAlgorithms ssh-ed25519\n" }
            if mode == "md5" { config += "Host kh-md5\n  FingerprintHash md5\n" }
            config += "Host kh-\(mode)\n  KnownHostsCommand \(script) \(mode) %H %I %t %f %K %n %h %p %r %u %k %C %l %L %d %i 100%% ${HOME} 'two words'\n"
        }
        let configPath = try write("ssh_config", config)
        let inventory = try write("hosts", modes.map { "kh-\($0)\n" }.joined())

        let run = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "json", "--no-history", "--inventory", inventory,
                                                                "--inventory-format", "plain", "--ssh-config", configPath,
                                                                "--known-hosts", knownHosts, "--timeout", "10"])
        let reportBytes = Data(run.stdout)
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: reportBytes) as? [String: Any], run.stderrText)
        var rows: [String: [String: Any]] = [:]
        for row in document["hosts"] as? [[String: Any]] ?? [] { rows[row["name"] as? String ?? ""] = row }
        var fleettrustRuns: [String: [String]] = [:]
        for mode in modes {
            fleettrustRuns[mode] = loggedRuns(mode)
            unlink(path("argv-\(mode).log"))
        }

        let expected: [String: (fleettrust: String, ssh: SSHOracle.Finding)] = [
            "exact": ("trusted", .accepted), "other": ("changed", .changed), "nothing": ("new", .unknown),
            "order": ("trusted", .accepted), "fail": ("error", .other), "explicit": ("trusted", .accepted), "md5": ("trusted", .accepted),
        ]
        for mode in modes {
            let ssh = try SSHOracle.handshake(host: "kh-\(mode)", config: configPath)
            let row = rows["kh-\(mode)"]
            XCTAssertEqual(ssh.finding, expected[mode]?.ssh, "\(mode): ssh said \(ssh.finalMessage)")
            XCTAssertEqual(row?["status"] as? String, expected[mode]?.fleettrust, "\(mode): \(row?["reason"] ?? "-")")
            if mode != "fail" {
                XCTAssertEqual(row?["negotiated_algorithm"] as? String, ssh.hostKeyAlgorithm, "\(mode): the same key is met")
            }
            let sshRuns = loggedRuns(mode)
            XCTAssertFalse(sshRuns.isEmpty, "\(mode): ssh ran the command")
            for sshRun in sshRuns {
                XCTAssertTrue(fleettrustRuns[mode]?.contains(sshRun) == true,
                              "\(mode): ssh ran\n\(sshRun)\nfleettrust ran\n\(fleettrustRuns[mode]?.joined(separator: "\n") ?? "")")
            }
        }
        XCTAssertEqual(fleettrustRuns["exact"]?.count, 4, "ORDER once, HOSTNAME once per probed key")
        XCTAssertEqual(rows["kh-order"]?["negotiated_algorithm"] as? String, ecdsa.type,
                       "the ORDER run's line for the bare name puts ECDSA first, as in ssh")
        XCTAssertTrue(run.stdout.count > 0 && String(decoding: run.stdout, as: UTF8.self).contains("exited with status 1"),
                      "the failure names the command and its exit status")

        // A replay runs nothing: the host is unchecked, saying so.
        let report = try write("report.json", String(decoding: reportBytes, as: UTF8.self))
        let runsBeforeReplay = loggedRuns("exact").count
        let replay = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "json", "--no-history", "--replay", report,
                                                                   "--known-hosts", knownHosts])
        let replayed = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(replay.stdout)) as? [String: Any], replay.stderrText)
        let exact = (replayed["hosts"] as? [[String: Any]] ?? []).first { $0["name"] as? String == "kh-exact" }
        XCTAssertEqual(exact?["status"] as? String, "unchecked")
        XCTAssertTrue((exact?["reason"] as? String ?? "").contains("was not run for this judgement"), "\(exact?["reason"] ?? "-")")
        XCTAssertEqual(loggedRuns("exact").count, runsBeforeReplay, "the replay ran nothing")
    }

    func testACommandAnInventoryNamesIsNeverRun() throws {
        let sshd = try LoopbackSSHD()
        defer { sshd.stop() }
        let marker = path("marker")
        let script = try write("marker.sh", "#!/bin/sh\ntouch \(marker)\n", executable: true)
        let sshConfigInventory = try write("inventory_config", """
            Host inv-cmd
              HostName 127.0.0.1
              Port \(sshd.port)
              KnownHostsCommand \(script) %h

            """)
        let ini = try write("hosts.ini", "inv-ansible ansible_host=127.0.0.1 ansible_port=\(sshd.port) "
            + "ansible_ssh_common_args='-o KnownHostsCommand=\(script)'\n")
        // The user's own configuration names a command too; the inventory's -o comes first and wins.
        let userConfig = try write("user_config", "Host *\n  KnownHostsCommand \(script) user\n")
        let knownHosts = try write("known_hosts", "")
        for (inventory, format, host) in [(sshConfigInventory, "ssh-config", "inv-cmd"), (ini, "ini", "inv-ansible")] {
            let run = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "json", "--no-history", "--inventory", inventory,
                                                                    "--inventory-format", format, "--ssh-config", userConfig,
                                                                    "--known-hosts", knownHosts, "--timeout", "10"])
            let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.stdout)) as? [String: Any], run.stderrText)
            let row = (document["hosts"] as? [[String: Any]] ?? []).first { $0["name"] as? String == host }
            XCTAssertEqual(row?["status"] as? String, "unchecked", host)
            XCTAssertTrue((row?["reason"] as? String ?? "").contains("KnownHostsCommand"), "\(row?["reason"] ?? "-")")
            XCTAssertTrue((row?["reason"] as? String ?? "").contains("never runs a command an inventory names"), "\(row?["reason"] ?? "-")")
            XCTAssertFalse(FileManager.default.fileExists(atPath: marker), "\(host): the inventory's command was run")
        }
    }
}
