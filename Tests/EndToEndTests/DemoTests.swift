import FleetTrustTestFleet
import Foundation
import XCTest

/// `make demo` as a newcomer meets it: where its files are is said before the screen opens, it
/// keeps its history and audit log to itself, connect really logs in, the host behind the demo's
/// bastion is judged through it, and every process the demo started is gone once it quits.
final class DemoTests: XCTestCase {
    private var terminal: DashboardTmux?
    private var home = ""

    override func setUpWithError() throws {
        home = NSTemporaryDirectory() + "demo-home-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
    }

    override func tearDown() {
        terminal?.stop()
        try? FileManager.default.removeItem(atPath: home)
    }

    func testTheDemoNamesItsFilesKeepsItsOwnStateAndConnectLogsIn() throws {
        let demo = [DashboardTmux.built("testfleet"), "demo", "--hosts", "3", "--rsa-bits", "2048", "--",
                    DashboardTmux.executable].map(DashboardTmux.quote).joined(separator: " ")
        // The user's state where it is without XDG_STATE_HOME: anything the demo wrote to it would land under `home`.
        let environment = DashboardTmux.environment(["HOME": home, "XDG_STATE_HOME": home + "/.local/state"])
        let terminal = try DashboardTmux(script: "env \(environment) \(demo); echo DEMO-EXIT=$?; exec sleep 600",
                                         width: 140, height: 40)
        self.terminal = terminal
        // web1 (by CA), db1, the bastion and the host behind it trusted; cache1 new.
        let (listed, screen) = terminal.waitFor(timeout: 90) { $0.contains("T 4 trusted") && $0.contains("N 1 new") }
        XCTAssertTrue(listed, screen)
        for name in ["web1", "db1", "cache1", "bastion1"] { XCTAssertTrue(screen.contains(" \(name) "), "the demo's hosts have names: \(screen)") }
        let routed = screen.split(separator: "\n").first { $0.contains(" vault1 ") }.map(String.init) ?? ""
        XCTAssertTrue(routed.contains("trusted") && routed.contains("via bastion1"),
                      "the host behind the bastion is judged through it: \(screen)")
        let started = demoProcesses()
        XCTAssertGreaterThanOrEqual(started.filter { $0.command == "sshd" }.count, 5, "three hosts, the bastion and the host behind it: \(started)")
        XCTAssertTrue(started.contains { $0.command == "ssh" }, "the bastion's control master: \(started)")

        // Connect on vault1, the last row: ssh logs in through the bastion with the demo's key and ssh_config.
        for _ in 1...4 { terminal.send("j") }
        terminal.send("c")
        let (shell, login) = terminal.waitFor(timeout: 30) { $0.contains("Debian") || $0.contains("$ ") || $0.contains("# ") }
        XCTAssertTrue(shell, "connect did not reach a shell on the host behind the bastion: \(login)")
        // The remote shell is this machine's, as the user running the demo: it leaves a mark in `home`.
        terminal.type("echo demo-login-$((6*7)) > \(home)/connected; exit")
        terminal.send("Enter")
        let (back, afterLogin) = terminal.waitFor(timeout: 20) { $0.contains("T 4 trusted") }
        XCTAssertTrue(back, afterLogin)
        XCTAssertEqual(try String(contentsOfFile: home + "/connected", encoding: .utf8), "demo-login-42\n")
        terminal.send("q")
        let (ended, final) = terminal.waitFor(timeout: 30) { $0.contains("DEMO-EXIT=") }
        XCTAssertTrue(ended, final)
        XCTAssertEqual(DashboardTmux.waitUntilGone(started, timeout: 10).map(\.pid), [], "the demo's processes outlived it: \(started)")

        for expected in ["The demo fleet: 3 real sshd on 127.0.0.1", "ssh_config   ", "inventory    ", "known_hosts  ", "history.sqlite",
                         "audit.jsonl", " scan --inventory ", " sync --check ", " tidy --inventory ", "was removed", "DEMO-EXIT=0"] {
            XCTAssertTrue(final.contains(expected), "the demo's terminal lacks \(expected):\n\(final)")
        }
        let audit = try XCTUnwrap(final.range(of: #"audit log +(\S+)"#, options: .regularExpression).map { String(final[$0]) })
        XCTAssertTrue(audit.contains("/audit.jsonl"), audit)
        XCTAssertFalse(FileManager.default.fileExists(atPath: home + "/.local/state/fleettrust"),
                       "the demo wrote into the user's own state directory")
    }

    /// The processes the running demo started, by PID: those whose command line names its fleet
    /// directory (`fleettrust-fleet-PID-…`, the demo's own PID): its sshds (`-f DIR/…`), the
    /// dashboard (`--inventory DIR/…`) and the bastion's control master (`-F DIR/ssh_config`),
    /// which runs in the background, no child of the demo.
    private func demoProcesses() -> [(pid: pid_t, command: String)] {
        guard let demo = terminal?.childPIDs.first, let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else {
            return []
        }
        let marker = Data("/fleettrust-fleet-\(demo)-".utf8)
        return entries.compactMap { entry -> (pid: pid_t, command: String)? in
            guard let pid = pid_t(entry), let arguments = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"),
                  arguments.range(of: marker) != nil, let command = DashboardTmux.command(of: pid) else { return nil }
            return (pid, command)
        }
    }
}
