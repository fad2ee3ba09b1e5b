import FleetTrustTestFleet
import Foundation
import XCTest

/// `make demo` as a newcomer meets it: where its files are is said before the screen opens, it
/// keeps its history and audit log to itself, and connect really logs in.
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
        let (listed, screen) = terminal.waitFor(timeout: 90) { $0.contains("T 2 trusted") && $0.contains("N 1 new") }
        XCTAssertTrue(listed, screen)
        for name in ["web1", "db1", "cache1"] { XCTAssertTrue(screen.contains(" \(name) "), "the demo's hosts have names: \(screen)") }

        terminal.send("j")
        terminal.send("c")
        let (shell, login) = terminal.waitFor(timeout: 30) { $0.contains("Debian") || $0.contains("$ ") || $0.contains("# ") }
        XCTAssertTrue(shell, "connect did not reach a shell on the demo host: \(login)")
        // The remote shell is this machine's, as the user running the demo: it leaves a mark in `home`.
        terminal.type("echo demo-login-$((6*7)) > \(home)/connected; exit")
        terminal.send("Enter")
        let (back, afterLogin) = terminal.waitFor(timeout: 20) { $0.contains("T 2 trusted") }
        XCTAssertTrue(back, afterLogin)
        XCTAssertEqual(try String(contentsOfFile: home + "/connected", encoding: .utf8), "demo-login-42\n")
        terminal.send("q")
        let (ended, final) = terminal.waitFor(timeout: 30) { $0.contains("DEMO-EXIT=") }
        XCTAssertTrue(ended, final)

        for expected in ["The demo fleet: 3 real sshd on 127.0.0.1", "inventory    ", "known_hosts  ", "history.sqlite",
                         "audit.jsonl", " scan --inventory ", " sync --check ", " tidy --inventory ", "was removed", "DEMO-EXIT=0"] {
            XCTAssertTrue(final.contains(expected), "the demo's terminal lacks \(expected):\n\(final)")
        }
        let audit = try XCTUnwrap(final.range(of: #"audit log +(\S+)"#, options: .regularExpression).map { String(final[$0]) })
        XCTAssertTrue(audit.contains("/audit.jsonl"), audit)
        XCTAssertFalse(FileManager.default.fileExists(atPath: home + "/.local/state/fleettrust"),
                       "the demo wrote into the user's own state directory")
    }
}
