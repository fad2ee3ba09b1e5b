import FleetTrustCore
import FleetTrustTestFleet
import Foundation
import XCTest

/// The dashboard on a recorded scan (`fleettrust --replay FILE`), in a real terminal: the rows are
/// the recorded proof judged against this machine's files (hosts whose sshd is stopped still show
/// their recorded verdicts: nothing is probed), the detail view names the scanner, a split view is
/// an alarm, rescans are refused, and trusting a new host needs `--trust-on-first-use` (as
/// `scan --replay --format known-hosts`), says the keys come from the recording in its first line
/// and in the audit record, and saves the recorded key, with which the real `ssh` then passes
/// host-key checking.
final class DashboardReplayTests: XCTestCase {
    private var fleet: TestFleet?
    private var terminal: DashboardTmux?
    private var scratch = ""
    private var knownHosts: String { scratch + "/known_hosts" }
    private var recording: String { scratch + "/recorded.json" }

    override func setUpWithError() throws {
        scratch = NSTemporaryDirectory() + "dashboard-replay-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() {
        terminal?.stop()
        fleet?.stop()
        try? FileManager.default.removeItem(atPath: scratch)
    }

    /// Records a scan of a 6-host fleet as `scanner-a`, then adds a second scanner's entry for
    /// host 5 carrying host 1's keys: a split view.
    private func record(_ fleet: TestFleet) throws {
        let run = try ProgramRun.run(DashboardTmux.executable, ["scan", "--format", "json", "--inventory", fleet.inventoryPath,
                                                                "--known-hosts", "/dev/null", "--no-history", "--output", recording])
        XCTAssertEqual(run.status, 1, run.stderrText)
        var document = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: recording))) as? [String: Any])
        var hosts = try XCTUnwrap(document["hosts"] as? [[String: Any]])
        XCTAssertEqual(hosts.count, 6)
        for index in hosts.indices {
            hosts[index]["scanned_from"] = "scanner-a"
            hosts[index]["scanned_at"] = "2026-11-25T17:00:0\(index)Z"
        }
        var twin = hosts[5]
        twin["keys"] = hosts[1]["keys"]
        twin["scanned_from"] = "scanner-b"
        hosts.append(twin)
        document["hosts"] = hosts
        try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: recording))
    }

    private func row(_ screen: String, host: TestFleet.Host) -> [String] {
        screen.split(separator: "\n").filter { $0.contains(host.endpoints[0].label + " ") }.map(String.init)
    }

    func testARecordingIsJudgedHereShowsItsScannerRefusesRescansAndSavesTheRecordedKey() throws {
        let fleet = try TestFleet.start(hosts: 6)
        self.fleet = fleet
        try FileManager.default.copyItem(atPath: fleet.knownHostsPath, toPath: knownHosts)
        try record(fleet)
        for index in 3..<6 { fleet.stopHost(index) }

        let terminal = try DashboardTmux(arguments: ["--replay", recording, "--known-hosts", knownHosts,
                                                     "--audit-log", scratch + "/audit.jsonl"])
        self.terminal = terminal
        let (filled, screen) = terminal.waitFor { !$0.contains("scanning") && $0.contains("S 2 split-view") }
        XCTAssertTrue(filled, screen)
        XCTAssertTrue(screen.contains("Recorded scan"), screen)
        XCTAssertTrue(screen.contains(" recording \(recording)"), "the header calls the recording one: \(screen)")
        let expected = ["T trusted", "T trusted", "N new", "C changed", "R revoked"]
        for (index, status) in expected.enumerated() {
            XCTAssertEqual(row(screen, host: fleet.hosts[index]).count, 1, screen)
            XCTAssertTrue(row(screen, host: fleet.hosts[index]).first?.contains(status) == true, "host \(index): \(screen)")
        }
        XCTAssertEqual(row(screen, host: fleet.hosts[5]).filter { $0.contains("S split-view") }.count, 2, screen)

        terminal.send("/")
        terminal.type(":\(fleet.hosts[5].port)")
        terminal.send("Enter")
        XCTAssertTrue(terminal.waitFor { $0.contains("2 shown") }.0, terminal.capture())
        terminal.send("Enter")
        let (split, detail) = terminal.waitFor { $0.contains("other view:") }
        XCTAssertTrue(split, detail)
        XCTAssertTrue(detail.contains("recorded: proved by scanner-a at 2026-11-25T17:00:05Z"), detail)
        XCTAssertTrue(detail.contains("other view: scanner-b"), detail)
        XCTAssertTrue(detail.contains(fleet.hosts[1].key(ofType: "ssh-ed25519")!.sha256Fingerprint), detail)
        terminal.send("Escape", "t")
        XCTAssertTrue(terminal.waitFor { $0.contains("cannot be trusted here") }.0, terminal.capture())

        terminal.send("Escape")
        terminal.send("/")
        terminal.send("Escape")
        terminal.send("/")
        terminal.type(":\(fleet.hosts[2].port)")
        terminal.send("Enter")
        XCTAssertTrue(terminal.waitFor { $0.contains("1 shown") }.0, terminal.capture())
        terminal.send("r")
        XCTAssertTrue(terminal.waitFor { $0.contains("This is a recording") }.0, terminal.capture())
        terminal.send("Enter")
        XCTAssertTrue(terminal.waitFor { $0.contains("recorded: proved by scanner-a at 2026-11-25T17:00:02Z") }.0, terminal.capture())
        terminal.send("Escape")
        terminal.send("t")
        XCTAssertTrue(terminal.waitFor { $0.contains("is new: start the dashboard with --trust-on-first-use") }.0, terminal.capture())
        terminal.stop()

        let firstUse = try DashboardTmux(arguments: ["--replay", recording, "--known-hosts", knownHosts, "--trust-on-first-use",
                                                     "--audit-log", scratch + "/audit.jsonl"])
        self.terminal = firstUse
        XCTAssertTrue(firstUse.waitFor { $0.contains("S 2 split-view") }.0, firstUse.capture())
        try trustRecordedNewHost(fleet, firstUse)
    }

    private func trustRecordedNewHost(_ fleet: TestFleet, _ terminal: DashboardTmux) throws {
        terminal.send("/")
        terminal.type(":\(fleet.hosts[2].port)")
        terminal.send("Enter")
        XCTAssertTrue(terminal.waitFor { $0.contains("1 shown") }.0, terminal.capture())
        terminal.send("t")
        let (asked, dialog) = terminal.waitFor { $0.contains("Trust 1 host?") }
        XCTAssertTrue(asked, dialog)
        XCTAssertTrue(dialog.contains("These keys come from the recording \(recording)"), dialog)
        XCTAssertTrue(dialog.replacingOccurrences(of: "\n", with: " ").contains("scanner-a"), dialog)
        terminal.send("y")
        let (saved, after) = terminal.waitFor { $0.contains("Trusted \(fleet.hosts[2].endpoints[0].label);") && $0.contains("T trusted") }
        XCTAssertTrue(saved, after)
        XCTAssertEqual(try SSHOracle.check(name: fleet.hosts[2].address, port: fleet.hosts[2].port, knownHosts: knownHosts).verdict, .trusted)
        let audit = try String(contentsOfFile: scratch + "/audit.jsonl", encoding: .utf8)
        XCTAssertTrue(audit.contains("keys from the recording \(recording), scanned from scanner-a, not proved from this machine"), audit)
        terminal.send("q")
        XCTAssertTrue(terminal.waitFor { $0.contains("\(DashboardTmux.exitMarker)0") }.0, terminal.capture())
    }
}
