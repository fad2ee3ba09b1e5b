import FleetTrustCore
import FleetTrustTestFleet
import Foundation
import XCTest

/// Scale beyond one machine, for real: the real `ansible-playbook` (ansible-core from PyPI, as the
/// inventory tests install it) runs `contrib/ansible/fleettrust-scan.yml` against two scanners,
/// real `sshd`s on two loopback addresses that it logs in to with its ssh connection (each
/// scanner is this machine, reached as another host). Each scanner is told about its own
/// targets (real `sshd`s), and both about a name `twin` that each one's inventory points at a
/// different server: a split view. Then `merge`, `scan --replay` judged here (statuses,
/// `scanned_from`, exit codes, the real `ssh` as the oracle) and the dashboard on `--replay`.
/// The scanners' `sshd`s run where the Swift toolchain is hidden, as on a jump host: the binary
/// shipped is the one from `make dist`'s tarball, and the tested build fails there.
final class AnsibleFanOutTests: XCTestCase {
    private var scanners: TestFleet?
    private var targets: TestFleet?
    private var terminal: DashboardTmux?
    private var debianScanner: SpawnedProcess?
    private var debianRoot: DebianRoot?
    private var scratch = ""

    override func setUpWithError() throws {
        scratch = NSTemporaryDirectory() + "ft-fanout-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() {
        terminal?.stop()
        scanners?.stop()
        targets?.stop()
        debianScanner?.terminate()
        if debianRoot?.remove() != false { try? FileManager.default.removeItem(atPath: scratch) }
    }

    /// `ansible-playbook` beside the `ansible-inventory` the inventory tests install.
    /// `ansible-playbook` beside the oracle's `ansible-inventory`. Where `make test-dist` asked for
    /// this suite, an Ansible that cannot be installed fails it: a skip would pass unproven.
    private func playbookProgram() throws -> String {
        do {
            return URL(fileURLWithPath: try AnsibleInventoryOracle.executable()).deletingLastPathComponent()
                .appendingPathComponent("ansible-playbook").path
        } catch let skip as XCTSkip where ProcessInfo.processInfo.environment["FLEETTRUST_DIST_DIR"] != nil {
            XCTFail("make test-dist needs ansible-playbook: \(skip)")
            throw skip
        }
    }

    /// No `ansible.cfg` from anywhere, Ansible's state under the scratch directory, no colour.
    private var ansibleEnvironment: [String: String] {
        _ = FileManager.default.createFile(atPath: scratch + "/ansible.cfg", contents: Data())
        var environment = ProcessInfo.processInfo.environment
        environment["ANSIBLE_CONFIG"] = scratch + "/ansible.cfg"
        environment["ANSIBLE_HOME"] = scratch + "/ansible-home"
        environment["ANSIBLE_LOCAL_TEMP"] = scratch + "/ansible-local"
        environment["ANSIBLE_NOCOLOR"] = "1"
        environment["ANSIBLE_DEPRECATION_WARNINGS"] = "False"
        return environment
    }

    private func entries(_ path: String) throws -> [[String: Any]] {
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        return try XCTUnwrap(document["hosts"] as? [[String: Any]])
    }

    private func fleettrust(_ arguments: [String]) throws -> ProgramRun {
        try ProgramRun.run(DashboardTmux.executable, arguments, limit: 60)
    }

    func testPlaybookScansFromTwoScannersMergeAndReplayJudgeCentrallyAndASplitViewIsAnAlarm() throws {
        let dist = try DistArtifacts.located()
        let shipped = try dist.unpackTarball(into: scratch + "/dist") + "/bin/fleettrust"
        let playbook = try playbookProgram()
        var scannerOptions = TestFleet.Options(hosts: 2)
        scannerOptions.launcher = try HiddenToolchain.launcher()
        scannerOptions.samePort = true
        scannerOptions.certificateHost = false
        scannerOptions.allowLogin = true
        scannerOptions.rsaBits = 2048
        let scanners = try TestFleet(scannerOptions)
        self.scanners = scanners
        // Targets 0 trusted by CA, 1 trusted, 2 new, 3 changed, 4 revoked, 5 new: one port, six addresses.
        var targetOptions = TestFleet.Options(hosts: 6)
        targetOptions.samePort = true
        targetOptions.rsaBits = 2048
        let targets = try TestFleet(targetOptions)
        self.targets = targets
        let controllerKnownHosts = scratch + "/known_hosts"
        try FileManager.default.copyItem(atPath: targets.knownHostsPath, toPath: controllerKnownHosts)

        func line(_ name: String, _ target: Int) -> String {
            "\(name) ansible_host=\(targets.hosts[target].address) ansible_port=\(targets.hosts[target].port)"
        }
        try ([line("ca-host", 0), line("trusted-host", 1), line("twin", 2)].joined(separator: "\n") + "\n")
            .write(toFile: scratch + "/a.ini", atomically: true, encoding: .utf8)
        try ([line("changed-host", 3), line("revoked-host", 4), line("twin", 5)].joined(separator: "\n") + "\n")
            .write(toFile: scratch + "/b.ini", atomically: true, encoding: .utf8)
        // The controller checks the scanners' host keys strictly, as it would in production.
        let scannerKnownHosts = scanners.hosts.flatMap { host in host.publicKeys.map { "\(host.knownHostsName) \($0.openSSHLine)" } }
        try (scannerKnownHosts.joined(separator: "\n") + "\n").write(toFile: scratch + "/scanners_known_hosts", atomically: true, encoding: .utf8)
        let user = String(cString: getpwuid(getuid())!.pointee.pw_name)
        let scannersINI = """
            [fleettrust_scanners]
            scanner-a ansible_host=\(scanners.hosts[0].address) ansible_port=\(scanners.hosts[0].port) fleettrust_scan_inventory=\(scratch)/a.ini
            scanner-b ansible_host=\(scanners.hosts[1].address) ansible_port=\(scanners.hosts[1].port) fleettrust_scan_inventory=\(scratch)/b.ini

            [fleettrust_scanners:vars]
            ansible_user=\(user)
            ansible_ssh_private_key_file=\(scanners.loginKeyFile)
            ansible_ssh_args=-o ControlMaster=no -o ControlPersist=no
            ansible_ssh_common_args=-F /dev/null -o StrictHostKeyChecking=yes -o UserKnownHostsFile=\(scratch)/scanners_known_hosts -o GlobalKnownHostsFile=/dev/null
            ansible_python_interpreter=/usr/bin/python3
            ansible_pipelining=true
            fleettrust_binary=\(shipped)

            """
        try scannersINI.write(toFile: scratch + "/scanners.ini", atomically: true, encoding: .utf8)
        let leftBefore = try workingDirectoriesInTmp()

        let unshippable = try ProgramRun.run(playbook, ["-i", scratch + "/scanners.ini", "--limit", "scanner-a",
                                                        AnsibleInventoryOracle.packageRoot + "/contrib/ansible/fleettrust-scan.yml",
                                                        "-e", "fleettrust_results_dir=\(scratch)/unshippable", "-e", "fleettrust_binary=\(DashboardTmux.executable)"],
                                             limit: 120, environment: ansibleEnvironment)
        XCTAssertNotEqual(unshippable.status, 0, "the tested build ran on a scanner without the toolchain")
        XCTAssertTrue(unshippable.stdoutText.contains("error while loading shared libraries: libswift"), unshippable.stdoutText)

        let results = scratch + "/results"
        let played = try ProgramRun.run(playbook, ["-i", scratch + "/scanners.ini", AnsibleInventoryOracle.packageRoot + "/contrib/ansible/fleettrust-scan.yml",
                                                   "-e", "fleettrust_results_dir=\(results)",
                                                   "-e", #"{"fleettrust_scan_args": ["--known-hosts", "/dev/null", "--ssh-config", "/dev/null"]}"#],
                                     limit: 240, environment: ansibleEnvironment)
        XCTAssertEqual(played.status, 0, played.stdoutText + played.stderrText)
        XCTAssertEqual(try workingDirectoriesInTmp(), leftBefore, "the playbook left its working directory on a scanner")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: results).sorted(), ["scanner-a.json", "scanner-b.json"])
        for (scanner, names) in [("scanner-a", ["ca-host", "trusted-host", "twin"]), ("scanner-b", ["changed-host", "revoked-host", "twin"])] {
            let hosts = try entries("\(results)/\(scanner).json")
            XCTAssertEqual(hosts.map { $0["name"] as? String }, names, "each scanner scans only what it is told about")
            XCTAssertEqual(Set(hosts.map { $0["scanned_from"] as? String }), [scanner])
        }

        let merged = scratch + "/merged.json"
        let merge = try fleettrust(["merge", "--output", merged, "\(results)/scanner-a.json", "\(results)/scanner-b.json"])
        XCTAssertEqual(merge.status, 0, merge.stderrText)

        let replay = try fleettrust(["scan", "--replay", merged, "--known-hosts", controllerKnownHosts, "--no-history", "--format", "json"])
        XCTAssertEqual(replay.status, 2, "a split view (and a changed and a revoked host) is an alarm: \(replay.stderrText)")
        let judged = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(replay.stdout)) as? [String: Any])["hosts"] as? [[String: Any]]
        let seen = (judged ?? []).map { "\($0["name"] as? String ?? "?") \($0["scanned_from"] as? String ?? "?") \($0["status"] as? String ?? "?")" }
        XCTAssertEqual(seen.sorted(), ["ca-host scanner-a trusted", "changed-host scanner-b changed", "revoked-host scanner-b revoked",
                                       "trusted-host scanner-a trusted", "twin scanner-a split-view", "twin scanner-b split-view"])
        let twinB = (judged ?? []).first { $0["name"] as? String == "twin" && $0["scanned_from"] as? String == "scanner-b" }
        let reason = twinB?["reason"] as? String ?? ""
        XCTAssertTrue(reason.contains("scanner-a proved") && reason.contains(targets.hosts[2].key(ofType: "ssh-ed25519")!.sha256Fingerprint), reason)
        // What each non-split verdict says is what the real ssh says with the controller's known_hosts.
        let oracle = try [0, 1, 3, 4].map { try SSHOracle.check(name: targets.hosts[$0].address, port: targets.hosts[$0].port,
                                                                knownHosts: controllerKnownHosts).verdict }
        XCTAssertEqual(oracle, [.trustedByCA, .trusted, .changed, .revoked])
        let metrics = try fleettrust(["scan", "--replay", merged, "--known-hosts", controllerKnownHosts, "--no-history", "--format", "prometheus"])
        XCTAssertEqual(metrics.status, 2, metrics.stderrText)
        for scanner in ["scanner-a", "scanner-b"] {
            XCTAssertTrue(metrics.stdoutText.split(separator: "\n").contains {
                $0.hasPrefix("fleettrust_host_status{name=\"twin\"") && $0.contains("scanner=\"\(scanner)\"") && $0.contains("status=\"split-view\"")
            }, metrics.stdoutText)
        }
        let table = try fleettrust(["scan", "--replay", merged, "--known-hosts", controllerKnownHosts, "--no-history", "--wide"])
        XCTAssertEqual(table.status, 2)
        XCTAssertEqual(table.stdoutText.split(separator: "\n").filter { $0.hasPrefix("split-view") && $0.contains("twin") }.count, 2, table.stdoutText)
        let agreeing = try fleettrust(["scan", "--replay", "\(results)/scanner-a.json", "--known-hosts", controllerKnownHosts, "--no-history"])
        XCTAssertEqual(agreeing.status, 1, "one scanner alone sees no split view (its twin is new): \(agreeing.stdoutText)")

        let terminal = try DashboardTmux(arguments: ["--replay", merged, "--known-hosts", controllerKnownHosts,
                                                     "--audit-log", scratch + "/audit.jsonl"])
        self.terminal = terminal
        let (filled, screen) = terminal.waitFor { !$0.contains("scanning") && $0.contains("S 2 split-view") }
        XCTAssertTrue(filled, screen)
        XCTAssertTrue(screen.contains("proved by scanner-a, scanner-b"), screen)
        for (name, status) in [("ca-host", "T trusted"), ("trusted-host", "T trusted"), ("changed-host", "C changed"), ("revoked-host", "R revoked")] {
            XCTAssertTrue(screen.split(separator: "\n").contains { $0.contains(status) && $0.contains(" \(name) ") }, "\(name): \(screen)")
        }
        XCTAssertEqual(screen.split(separator: "\n").filter { $0.contains("S split-view") && $0.contains(" twin ") }.count, 2, screen)
        terminal.send("/")
        terminal.type("revoked-host")
        terminal.send("Enter")
        XCTAssertTrue(terminal.waitFor { $0.contains("1 shown") }.0, terminal.capture())
        terminal.send("Enter")
        let (detailed, detail) = terminal.waitFor { $0.contains("recorded: proved by scanner-b at ") }
        XCTAssertTrue(detailed, detail)
        terminal.send("Escape", "q")
        XCTAssertTrue(terminal.waitFor { $0.contains("\(DashboardTmux.exitMarker)0") }.0, terminal.capture())
    }

    /// `fleettrust_package` for real: the scanner is a fresh Debian 12 root (debootstrap) with
    /// only `sshd` and Python added, its `sshd` running chrooted there; the playbook installs the
    /// .deb with apt (which brings its dependencies) and scans from it with the installed binary.
    func testPlaybookInstallsThePackageOnAFreshDebianScannerWithAptAndScansFromThere() throws {
        let dist = try DistArtifacts.located()
        let playbook = try playbookProgram()
        let root = try DebianRoot(packageRoot: AnsibleInventoryOracle.packageRoot, scratch: scratch)
        debianRoot = root
        // No service starts inside the root while packages install (its network is this machine's).
        try "#!/bin/sh\nexit 101\n".write(toFile: root.path + "/usr/sbin/policy-rc.d", atomically: true, encoding: .utf8)
        chmod(root.path + "/usr/sbin/policy-rc.d", 0o755)
        let updated = try root.run(["apt-get", "update", "-qq"], limit: 300)
        XCTAssertEqual(updated.status, 0, "apt-get update in the Debian root cannot reach its source: \(updated.stdoutText)\(updated.stderrText)")
        let prepared = try root.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "openssh-server", "python3", "python3-apt"],
                                    limit: 600)
        XCTAssertEqual(prepared.status, 0, prepared.stdoutText + prepared.stderrText)
        XCTAssertFalse(FileManager.default.fileExists(atPath: root.path + "/usr/bin/fleettrust"))

        let login = scratch + "/login_key"
        XCTAssertEqual(try ProgramRun.run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", login]).status, 0)
        try FileManager.default.createDirectory(atPath: root.path + "/run/sshd", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: login + ".pub", toPath: root.path + "/etc/ssh/fleettrust_test_authorized_keys")
        let port = try Loopback.freePort()
        try ["ListenAddress 127.0.0.1:\(port)", "HostKey /etc/ssh/ssh_host_ed25519_key", "PidFile none", "UsePAM no",
             "StrictModes no", "PermitRootLogin prohibit-password", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
             "AuthorizedKeysFile /etc/ssh/fleettrust_test_authorized_keys", "Subsystem sftp /usr/lib/openssh/sftp-server",
             "UseDNS no", "LogLevel ERROR"]
            .joined(separator: "\n").appending("\n").write(toFile: root.path + "/etc/ssh/fleettrust_test_sshd_config", atomically: true, encoding: .utf8)
        let scanner = try root.start(["/usr/sbin/sshd", "-D", "-e", "-f", "/etc/ssh/fleettrust_test_sshd_config"], stderrPath: scratch + "/sshd.log")
        debianScanner = scanner
        let deadline = Date().addingTimeInterval(15)
        while !Loopback.accepts(address: "127.0.0.1", port: port) {
            guard scanner.isRunning, Date() < deadline else {
                return XCTFail("the Debian scanner's sshd did not start: \((try? String(contentsOfFile: scratch + "/sshd.log", encoding: .utf8)) ?? "")")
            }
            usleep(10_000)
        }
        let hostKey = try String(contentsOfFile: root.path + "/etc/ssh/ssh_host_ed25519_key.pub", encoding: .utf8)
        try "[127.0.0.1]:\(port) \(hostKey)".write(toFile: scratch + "/scanners_known_hosts", atomically: true, encoding: .utf8)

        var targetOptions = TestFleet.Options(hosts: 5)
        targetOptions.rsaBits = 2048
        let targets = try TestFleet(targetOptions)
        self.targets = targets
        try """
            [fleettrust_scanners]
            debian ansible_host=127.0.0.1 ansible_port=\(port) fleettrust_scan_inventory=\(targets.inventoryPath)

            [fleettrust_scanners:vars]
            ansible_user=root
            ansible_ssh_private_key_file=\(login)
            ansible_ssh_args=-o ControlMaster=no -o ControlPersist=no
            ansible_ssh_common_args=-F /dev/null -o StrictHostKeyChecking=yes -o UserKnownHostsFile=\(scratch)/scanners_known_hosts -o GlobalKnownHostsFile=/dev/null
            ansible_python_interpreter=/usr/bin/python3
            ansible_pipelining=true
            fleettrust_package=\(dist.package)

            """.write(toFile: scratch + "/scanners.ini", atomically: true, encoding: .utf8)
        let results = scratch + "/results"
        let played = try ProgramRun.run(playbook, ["-i", scratch + "/scanners.ini", AnsibleInventoryOracle.packageRoot + "/contrib/ansible/fleettrust-scan.yml",
                                                   "-e", "fleettrust_results_dir=\(results)"],
                                        limit: 600, environment: ansibleEnvironment)
        XCTAssertEqual(played.status, 0, played.stdoutText + played.stderrText)
        let installed = try root.run(["dpkg-query", "--show", "--showformat", "${Status} ${Version}", "fleettrust"])
        XCTAssertTrue(installed.stdoutText.hasPrefix("install ok installed "), installed.stdoutText + installed.stderrText)
        XCTAssertEqual(try entries(results + "/debian.json").map { $0["scanned_from"] as? String }, Array(repeating: "debian", count: 5))

        let replay = try fleettrust(["scan", "--replay", results + "/debian.json", "--known-hosts", targets.knownHostsPath, "--no-history", "--format", "json"])
        XCTAssertEqual(replay.status, 2, replay.stderrText)
        XCTAssertEqual(try RecordedScan.decode(Data(replay.stdout)).hosts.map(\.status), [.trusted, .trusted, .new, .changed, .revoked])
    }

    /// The playbook's private working directories (`fleettrust.*` under /tmp) present now.
    private func workingDirectoriesInTmp() throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: "/tmp").filter { $0.hasPrefix("fleettrust.") })
    }
}
