import FleetTrustCore
import FleetTrustTestFleet
import Foundation
import XCTest

/// A scan stopped by a signal (Ctrl-C, `timeout`, cron killing it) leaves no temporary file beside
/// its `--output`, keeps the old report, says so in one line and records what finished.
final class ScanInterruptionTests: XCTestCase {
    func testSIGTERMKeepsTheOldReportRemovesTheTemporaryFileAndRecordsWhatFinished() throws {
        let fleet = try TestFleet(TestFleet.Options(hosts: 2))
        defer { fleet.stop() }
        let port = 47_000 + Int(getpid() % 900)
        let silent = try (1...3).map { try SilentListener(address: "127.0.2.\($0)", port: port) }
        defer { silent.forEach { $0.close() } }
        let directory = fleet.directory + "/interrupted"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let inventory = directory + "/inventory.txt"
        try (fleet.hosts.map { $0.endpoints[0].label } + silent.map { "\($0.address):\(port)" })
            .joined(separator: "\n").write(toFile: inventory, atomically: true, encoding: .utf8)
        let report = directory + "/report.json"
        try "the last complete report\n".write(toFile: report, atomically: true, encoding: .utf8)
        let history = directory + "/history.sqlite"
        let stderr = directory + "/stderr.txt"

        let scan = try SpawnedProcess(BuiltProducts.fleettrust,
                                      ["scan", "--inventory", inventory, "--known-hosts", fleet.knownHostsPath, "--history", history,
                                       "--timeout", "60", "--format", "json", "--output", report], stderrPath: stderr)
        defer { scan.terminate(grace: 1) }
        // The two sshd answer within moments; the silent ports hold the scan for a minute.
        let deadline = Date().addingTimeInterval(30)
        func recorded() -> Int {
            (try? HistoryStore.open(path: history, readOnly: true)?.history(for: fleet.hosts.map { InventoryHost(name: $0.endpoints[0].label, address: $0.endpoints[0].address, port: $0.endpoints[0].port) }).hosts.count) ?? 0
        }
        // The scan says nothing when the two sshd have answered: 3 s is ample for them, far short of the silent minute.
        Thread.sleep(forTimeInterval: 3)
        XCTAssertEqual(recorded(), 0, "nothing is recorded before the scan ends")
        XCTAssertTrue(scan.isRunning)
        kill(scan.pid, SIGTERM)
        while scan.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }

        XCTAssertEqual(scan.exitStatus, 128 + SIGTERM)
        XCTAssertEqual(try String(contentsOfFile: report, encoding: .utf8), "the last complete report\n")
        let left = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix(".") || $0.contains("report") }
        XCTAssertEqual(left, ["report.json"], "a temporary file was left beside the report")
        let said = try String(contentsOfFile: stderr, encoding: .utf8)
        XCTAssertEqual(said, "fleettrust: interrupted by SIGTERM: 2 of 5 hosts proved their keys and are recorded in the history; "
                       + "\(report) was left as it was\n")
        XCTAssertEqual(recorded(), 2, "the finished probes are in the history")

        // An --output that did not exist is not said to be left as it was: it was never written.
        let fresh = directory + "/fresh.json", freshStderr = directory + "/fresh-stderr.txt"
        let second = try SpawnedProcess(BuiltProducts.fleettrust,
                                        ["scan", "--inventory", inventory, "--known-hosts", fleet.knownHostsPath, "--no-history",
                                         "--timeout", "60", "--format", "json", "--output", fresh], stderrPath: freshStderr)
        defer { second.terminate(grace: 1) }
        // As above: no sign marks the scan as under way and past the sshd; 3 s is well inside the silent minute.
        Thread.sleep(forTimeInterval: 3)
        kill(second.pid, SIGTERM)
        let again = Date().addingTimeInterval(30)
        while second.isRunning && Date() < again { Thread.sleep(forTimeInterval: 0.1) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: fresh))
        XCTAssertEqual(try String(contentsOfFile: freshStderr, encoding: .utf8),
                       "fleettrust: interrupted by SIGTERM: 2 of 5 hosts proved their keys; \(fresh) was not written\n")
    }

    /// An inventory may name a FIFO as the host's `RevokedHostKeys` file; reading it never returns
    /// (as for `ssh`, which a signal still ends). Past the probes the scan must still end on one
    /// SIGTERM (`timeout`, cron), removing its `--output` temporary file.
    func testSIGTERMEndsAScanBlockedOnAFIFOTheInventoryNamed() throws {
        let fleet = try TestFleet(TestFleet.Options(hosts: 1))
        defer { fleet.stop() }
        let directory = fleet.directory + "/fifo"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let fifo = directory + "/revoked"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let endpoint = fleet.hosts[0].endpoints[0]
        let inventory = directory + "/hosts.ini"
        try "[web]\nh1 ansible_host=\(endpoint.address) ansible_port=\(endpoint.port) ansible_ssh_common_args='-o RevokedHostKeys=\(fifo)'\n"
            .write(toFile: inventory, atomically: true, encoding: .utf8)
        let report = directory + "/report.json"
        try "the last complete report\n".write(toFile: report, atomically: true, encoding: .utf8)
        let stderr = directory + "/stderr.txt"
        let scan = try SpawnedProcess(BuiltProducts.fleettrust,
                                      ["scan", "--inventory", inventory, "--known-hosts", fleet.knownHostsPath, "--no-history",
                                       "--timeout", "10", "--format", "json", "--output", report], stderrPath: stderr)
        defer { scan.terminate(grace: 1) }
        // Signal only once a thread of the scan is blocked on the FIFO (the kernel's wait channel says so).
        let blocked = Date().addingTimeInterval(30)
        while !Self.waitsOnAFIFO(scan.pid) && scan.isRunning && Date() < blocked { usleep(10_000) }
        XCTAssertTrue(Self.waitsOnAFIFO(scan.pid), "the scan never blocked on the FIFO")
        XCTAssertTrue(scan.isRunning, "the scan waits on the FIFO, as ssh would")
        kill(scan.pid, SIGTERM)
        let deadline = Date().addingTimeInterval(10)
        while scan.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }

        XCTAssertFalse(scan.isRunning, "one SIGTERM did not end a scan blocked on a FIFO")
        XCTAssertEqual(scan.exitStatus, 128 + SIGTERM)
        XCTAssertEqual(try String(contentsOfFile: report, encoding: .utf8), "the last complete report\n")
        let left = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix(".") }
        XCTAssertEqual(left, [], "a temporary file was left beside the report")
        XCTAssertEqual(try String(contentsOfFile: stderr, encoding: .utf8),
                       "fleettrust: interrupted by SIGTERM: stopped at once, nothing recorded and no report written\n")
    }

    /// Whether a thread of process `pid` sleeps opening or reading a FIFO (`/proc/PID/task/*/wchan`).
    private static func waitsOnAFIFO(_ pid: pid_t) -> Bool {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.contains { task in
            let channel = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/wchan", encoding: .utf8)) ?? ""
            return ["wait_for_partner", "pipe_read", "pipe_wait", "pipe_wait_readable"].contains(channel)
        }
    }
}
