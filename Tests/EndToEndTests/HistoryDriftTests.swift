import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// Drift against a real sshd restarted with other host keys on the same port: every kind
/// (first-scan, none, changed, reverted, added, removed) as `scan` judges it from the history,
/// the dashboard showing it, and which runs record nothing (replay, --no-history, --read-only).
final class HistoryDriftTests: XCTestCase {
    private var directory = ""
    private var sshd: SpawnedProcess?
    private var port = 0
    private var terminal: DashboardTmux?

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "ft-history-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
        for (name, type, bits) in [("edA", "ed25519", nil), ("edB", "ed25519", nil), ("ec", "ecdsa", 256), ("rsa", "rsa", 2048)]
            as [(String, String, Int?)] {
            try KeyFiles.generate(type: type, bits: bits, path: "\(directory)/\(name)")
        }
        port = try Loopback.freePort()
        try "web1 ansible_host=127.0.0.1 ansible_port=\(port)\n".write(toFile: directory + "/hosts", atomically: true, encoding: .utf8)
        FileManager.default.createFile(atPath: directory + "/known_hosts", contents: Data())
    }

    override func tearDown() {
        terminal?.stop()
        sshd?.terminate()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// (Re)starts sshd on the same port with these host keys only.
    private func serve(_ keys: [String]) throws {
        sshd?.terminate()
        sshd = nil
        var deadline = Date().addingTimeInterval(10)
        while Loopback.accepts(address: "127.0.0.1", port: port) && Date() < deadline { usleep(10_000) }
        let config = directory + "/sshd_config"
        try (["ListenAddress 127.0.0.1:\(port)"] + keys.map { "HostKey \(directory)/\($0)" } + [
            "PidFile none", "UsePAM no", "StrictModes no", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
            "AuthorizedKeysFile none", "UseDNS no",
        ]).joined(separator: "\n").appending("\n").write(toFile: config, atomically: true, encoding: .utf8)
        let process = try SpawnedProcess("/usr/sbin/sshd", ["-D", "-e", "-f", config], stderrPath: directory + "/sshd.log")
        sshd = process
        deadline = Date().addingTimeInterval(15)
        while !Loopback.accepts(address: "127.0.0.1", port: port) {
            guard process.isRunning, Date() < deadline else { throw TestFleetError.sshdDidNotStart(String(port)) }
            usleep(10_000)
        }
    }

    private var history: String { directory + "/state/fleettrust/history.sqlite" }

    private func fleettrust(_ arguments: [String]) throws -> ProgramRun {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = directory + "/state"
        environment["XDG_CONFIG_HOME"] = directory
        return try ProgramRun.run(BuiltProducts.fleettrust, arguments, limit: 60, environment: environment)
    }

    /// One scan as JSON: the host's entry and the exit status.
    private func scan(_ extra: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws -> (RecordedScan.Host, Int32) {
        let run = try fleettrust(["scan", "--inventory", directory + "/hosts", "--known-hosts", directory + "/known_hosts",
                                  "--format", "json", "--timeout", "10"] + extra)
        let report = try XCTUnwrap(try? RecordedScan.decode(Data(run.stdout)), run.stderrText, file: file, line: line)
        return (try XCTUnwrap(report.hosts.first, file: file, line: line), run.status)
    }

    private func fingerprint(_ name: String) throws -> String {
        try HostKey(openSSHLine: String(contentsOfFile: "\(directory)/\(name).pub", encoding: .utf8)).sha256Fingerprint
    }

    private func recordedProbes() throws -> Int {
        try XCTUnwrap(try HistoryStore.open(path: history, readOnly: true)).sightingCount()
    }

    func testRotatedRevertedAddedAndRemovedKeysOfARealSSHDAreJudgedAsDrift() throws {
        let (edA, edB, ec) = (try fingerprint("edA"), try fingerprint("edB"), try fingerprint("ec"))
        try serve(["edA", "ec"])
        var (host, status) = try scan(["--read-only"])
        XCTAssertEqual(host.drift, .firstScan, "read-only without a history file: every host's first scan")
        XCTAssertFalse(FileManager.default.fileExists(atPath: history), "--read-only created no history file")
        (host, status) = try scan()
        XCTAssertEqual(host.drift, .firstScan)
        XCTAssertEqual(status, 1, "new host, nothing else")
        let first = try XCTUnwrap(host.keys.first { $0.fingerprint == edA }?.firstSeen)
        XCTAssertNotNil(first.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"#, options: .regularExpression), first)

        (host, _) = try scan()
        XCTAssertEqual(host.drift, DriftKind.none)
        XCTAssertEqual(host.keys.first { $0.fingerprint == edA }?.firstSeen, first, "first_seen is kept")

        // Replay and --no-history record nothing; --read-only judges drift but records nothing.
        let replayed = try fleettrust(["scan", "--inventory", directory + "/hosts", "--known-hosts", directory + "/known_hosts",
                                       "--format", "json", "--output", directory + "/scan.json"])
        XCTAssertEqual(replayed.status, 1, replayed.stderrText)
        XCTAssertEqual(try recordedProbes(), 3)
        let replay = try fleettrust(["scan", "--replay", directory + "/scan.json", "--known-hosts", directory + "/known_hosts",
                                     "--format", "json"])
        XCTAssertNil(try RecordedScan.decode(Data(replay.stdout)).hosts.first?.drift, "a replay judges no drift")
        (host, _) = try scan(["--no-history"])
        XCTAssertNil(host.drift)
        XCTAssertNil(host.keys.first?.firstSeen)
        XCTAssertEqual(try recordedProbes(), 3, "replay and --no-history recorded nothing")

        try serve(["edB", "ec"])
        (host, status) = try scan(["--read-only"])
        XCTAssertEqual(host.drift, .changed)
        XCTAssertEqual(host.driftMoves.map(\.kind), [.changed])
        XCTAssertEqual(host.driftMoves.first?.before, edA)
        XCTAssertEqual(host.driftMoves.first?.now, edB)
        XCTAssertEqual(try recordedProbes(), 3, "--read-only recorded nothing")
        (host, status) = try scan()
        XCTAssertEqual(host.drift, .changed, "the read-only scan did not record edB")
        XCTAssertEqual(status, 1, "changed drift alone does not raise the exit status")

        // Back to the first key: reverted, shown by a read-only dashboard, then by scan with exit 2.
        try serve(["edA", "ec"])
        let terminal = try DashboardTmux(arguments: ["--inventory", directory + "/hosts", "--known-hosts", directory + "/known_hosts",
                                                     "--read-only", "--history", history])
        self.terminal = terminal
        var (shown, screen) = terminal.waitFor { $0.contains("! N new") }
        XCTAssertTrue(shown, "the list marks the reverted host with !:\n\(screen)")
        terminal.send("f", "f", "f", "f", "f", "f")
        (shown, screen) = terminal.waitFor { $0.contains("drifted since last scan") && $0.contains("web1") }
        XCTAssertTrue(shown, "the drifted filter keeps the host:\n\(screen)")
        terminal.send("Enter")
        (shown, screen) = terminal.waitFor { $0.contains("drift since last scan: reverted") && $0.contains("key timeline") }
        XCTAssertTrue(shown, screen)
        XCTAssertTrue(screen.contains(edA) && screen.contains(edB), "the timeline lists both keys:\n\(screen)")
        terminal.send("Escape")
        terminal.send("q")
        XCTAssertTrue(terminal.waitFor { $0.contains("\(DashboardTmux.exitMarker)0") }.0)
        terminal.stop()
        self.terminal = nil
        XCTAssertEqual(try recordedProbes(), 4, "the read-only dashboard recorded nothing")

        let table = try fleettrust(["scan", "--inventory", directory + "/hosts", "--known-hosts", directory + "/known_hosts",
                                    "--read-only"])
        XCTAssertTrue(table.stdoutText.contains("ssh-ed25519 REVERTED to a key seen before: \(edB) -> \(edA)"), table.stdoutText)
        XCTAssertEqual(table.status, 2)
        // One rule: Prometheus' per-host alarm level and a merge of the report say 2 as the exit status does.
        let prometheus = try fleettrust(["scan", "--inventory", directory + "/hosts", "--known-hosts", directory + "/known_hosts",
                                         "--read-only", "--format", "prometheus"])
        XCTAssertEqual(prometheus.status, 2, prometheus.stderrText)
        let levels = prometheus.stdoutText.split(separator: "\n").filter { $0.hasPrefix("fleettrust_host_alarm_level{") }
        XCTAssertEqual(levels.map { $0.split(separator: " ").last }, ["2"], prometheus.stdoutText)
        XCTAssertTrue(prometheus.stdoutText.contains("\nfleettrust_scan_exit_status 2\n"), prometheus.stdoutText)
        let report = try fleettrust(["scan", "--inventory", directory + "/hosts", "--known-hosts", directory + "/known_hosts",
                                     "--format", "json", "--output", directory + "/reverted.json"])
        XCTAssertEqual(report.status, 2, "a reverted key raises the exit status to 2")
        let merge = try fleettrust(["merge", directory + "/reverted.json"])
        XCTAssertEqual(merge.status, 0, merge.stderrText)
        let merged = try RecordedScan.decode(Data(merge.stdout))
        XCTAssertEqual(merged.hosts.map(\.drift), [.reverted], "the recorded scan judged the key reverted")
        XCTAssertEqual(merged.summary.exitStatus, 2, "the merged summary counts the reverted key as scan did")

        // A third type appears, seen by a recording dashboard: the next scan finds nothing new.
        try serve(["edA", "ec", "rsa"])
        (host, _) = try scan(["--read-only"])
        XCTAssertEqual(host.drift, .added)
        let recording = try DashboardTmux(arguments: ["--inventory", directory + "/hosts", "--known-hosts", directory + "/known_hosts",
                                                      "--audit-log", directory + "/audit.jsonl", "--history", history])
        self.terminal = recording
        (shown, screen) = recording.waitFor { $0.contains("+ N new") }
        XCTAssertTrue(shown, "the list marks the added type with +:\n\(screen)")
        recording.send("q")
        XCTAssertTrue(recording.waitFor { $0.contains("\(DashboardTmux.exitMarker)0") }.0)
        XCTAssertEqual(try recordedProbes(), 6, "the dashboard recorded its discovery")
        (host, _) = try scan()
        XCTAssertEqual(host.drift, DriftKind.none)

        try serve(["edA", "rsa"])
        (host, _) = try scan()
        XCTAssertEqual(host.drift, .removed)
        XCTAssertEqual(host.driftMoves.first?.before, ec)

        // The timeline: edA, then edB, then edA again (marked returned).
        let json = try fleettrust(["history", "web1", "--format", "json"])
        XCTAssertEqual(json.status, 0, json.stderrText)
        let timeline = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout)) as? [String: Any])
        let periods = try XCTUnwrap(timeline["periods"] as? [[String: Any]])
        let ed25519 = periods.filter { $0["type"] as? String == "ssh-ed25519" }
        XCTAssertEqual(ed25519.map { $0["fingerprint"] as? String }, [edA, edB, edA])
        XCTAssertEqual(ed25519.map { $0["returned"] as? Bool }, [false, false, true])
        XCTAssertEqual(timeline["scans"] as? Int, 8)
        let recent = try fleettrust(["history", "web1", "--since", "2099-01-01"])
        XCTAssertEqual(recent.status, 64)
        XCTAssertEqual(recent.stderrText.filter { $0 == "\n" }.count, 1, recent.stderrText)
        let unknown = try fleettrust(["history", "nosuchhost"])
        XCTAssertEqual(unknown.status, 64)
        XCTAssertTrue(unknown.stderrText.contains("nosuchhost: no recorded probe"), unknown.stderrText)
    }

    /// sync reads the history at its default place, as scan does, and records nothing in it: a
    /// new host presenting again a key it had replaced is exit 2 and is never saved, even on
    /// first use; `--no-history` judges no drift (and then first use saves the key).
    func testSyncJudgesRevertedDriftFromTheHistoryAndNeverSavesTheKey() throws {
        let knownHosts = directory + "/known_hosts"
        let sync = ["sync", "--inventory", directory + "/hosts", "--known-hosts", knownHosts, "--timeout", "10",
                    "--hash-known-hosts", "no", "--audit-log", directory + "/audit.jsonl"]
        for keys in [["edA"], ["edB"]] {
            try serve(keys)
            XCTAssertEqual(try scan().1, 1, "a new host each time (known_hosts stays empty)")
        }
        try serve(["edA"])
        let (reverted, scanStatus) = try scan(["--read-only"])
        XCTAssertEqual(reverted.drift, .reverted)
        XCTAssertEqual(scanStatus, 2)
        let probes = try recordedProbes()

        let plain = try fleettrust(sync)
        XCTAssertEqual(plain.status, 2, plain.stderrText)
        XCTAssertTrue(plain.stderrText.contains("REVERTED to a key seen before"), plain.stderrText)
        let firstUse = try fleettrust(sync + ["--trust-on-first-use"])
        XCTAssertEqual(firstUse.status, 2, firstUse.stderrText)
        XCTAssertEqual(try String(contentsOfFile: knownHosts, encoding: .utf8), "", "the reverted key was not saved")
        XCTAssertEqual(try SSHOracle.check(name: "127.0.0.1", port: port, knownHosts: knownHosts).verdict, .unknown)
        XCTAssertEqual(try recordedProbes(), probes, "sync recorded nothing in the history")

        let noHistory = try fleettrust(sync + ["--trust-on-first-use", "--no-history"])
        XCTAssertEqual(noHistory.status, 0, noHistory.stderrText)
        XCTAssertEqual(try SSHOracle.check(name: "127.0.0.1", port: port, knownHosts: knownHosts).verdict, .trusted,
                       "without the history the key is saved on first use, and ssh accepts it")
    }

    /// tidy reads the history: a known_hosts line of a type the host's latest complete scan did
    /// not present is unused-key-type; the line of the type it did present is not.
    func testTidyReportsARecordedKeyTypeTheHostNoLongerPresentsFromTheHistory() throws {
        try serve(["edA"])
        let presentedKey = try String(contentsOfFile: directory + "/edA.pub", encoding: .utf8).split(separator: " ").prefix(2).joined(separator: " ")
        let goneKey = try String(contentsOfFile: directory + "/ec.pub", encoding: .utf8).split(separator: " ").prefix(2).joined(separator: " ")
        let knownHosts = directory + "/known_hosts"
        try "[127.0.0.1]:\(port) \(presentedKey)\n[127.0.0.1]:\(port) \(goneKey)\n".write(toFile: knownHosts, atomically: true, encoding: .utf8)
        let before = try fleettrust(["tidy", "--known-hosts", knownHosts, "--inventory", directory + "/hosts", "--format", "json"])
        XCTAssertFalse(before.stdoutText.contains("unused-key-type"), "no history yet, no claim: \(before.stdoutText)")
        let scan = try fleettrust(["scan", "--inventory", directory + "/hosts", "--known-hosts", knownHosts, "--format", "json"])
        XCTAssertEqual(scan.status, 0, scan.stderrText)
        let run = try fleettrust(["tidy", "--known-hosts", knownHosts, "--inventory", directory + "/hosts", "--format", "json"])
        XCTAssertEqual(run.status, 1, run.stderrText)
        let findings = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.stdout)) as? [String: Any])["findings"] as? [[String: Any]]
        let unused = (findings ?? []).filter { $0["kind"] as? String == "unused-key-type" }
        XCTAssertEqual(unused.map { $0["line"] as? Int }, [2], "only the ECDSA line, which the host stopped presenting: \(run.stdoutText)")
        let without = try fleettrust(["tidy", "--known-hosts", knownHosts, "--inventory", directory + "/hosts", "--format", "json", "--no-history"])
        XCTAssertFalse(without.stdoutText.contains("unused-key-type"), without.stdoutText)
    }
}
