import FleetTrustTestFleet
import Foundation
import XCTest

/// The dashboard on terminals other than a well-behaved UTF-8 xterm that stays open: terminals
/// that hang up, no terminal at all, pipes, `LANG=C`, unknown types, other Home/End sequences.
final class DashboardTerminalTests: XCTestCase {
    private var terminal: DashboardTmux?
    private var fleet: TestFleet?
    private var started: [(pid: pid_t, command: String)] = []
    private var scratch = ""

    /// Six hosts that refuse connections at once: the list settles in a moment, no fleet needed.
    private var refusingInventory: String { scratch + "/refusing.txt" }
    private let refusingHosts = (1...6).map { "127.0.0.\($0):1" }

    override func setUpWithError() throws {
        scratch = NSTemporaryDirectory() + "dashboard-terminal-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        try (refusingHosts.joined(separator: "\n") + "\n").write(toFile: refusingInventory, atomically: true, encoding: .utf8)
        try "".write(toFile: scratch + "/known_hosts", atomically: true, encoding: .utf8)
    }

    override func tearDown() {
        terminal?.stop()
        for process in started where DashboardTmux.command(of: process.pid) == process.command { kill(process.pid, SIGKILL) }
        fleet?.stop()
        try? FileManager.default.removeItem(atPath: scratch)
    }

    private func dashboard(_ extra: [String] = [], width: Int = 120, height: Int = 30,
                           environment: [String: String] = [:]) throws -> DashboardTmux {
        let terminal = try DashboardTmux(arguments: ["--inventory", refusingInventory, "--known-hosts", scratch + "/known_hosts",
                                                     "--read-only"] + extra,
                                         width: width, height: height, environment: environment)
        self.terminal = terminal
        return terminal
    }

    private func settled(_ screen: String) -> Bool { screen.contains("6 unreachable") }

    private func exited(_ terminal: DashboardTmux, status: Int) -> (Bool, String) {
        terminal.waitFor { $0.contains("\(DashboardTmux.exitMarker)\(status)\n") }
    }

    // MARK: The terminal goes away

    /// `make demo` in a tmux pane, then the pane is killed. `started` gets the demo, its dashboard
    /// and its sshd, found by PID from the pane's shell down.
    private func killTheDemosSession(script: (String) -> String) throws -> TimeInterval {
        let demo = [DashboardTmux.built("testfleet"), "demo", "--hosts", "3", "--rsa-bits", "2048", "--",
                    DashboardTmux.executable, "--read-only"].map(DashboardTmux.quote).joined(separator: " ")
        let terminal = try DashboardTmux(script: script("env \(DashboardTmux.environment()) \(demo)"))
        self.terminal = terminal
        let (listed, screen) = terminal.waitFor(timeout: 60) { $0.contains("T 4 trusted") && $0.contains("N 1 new") }
        XCTAssertTrue(listed, screen)
        let demoPID = try XCTUnwrap(terminal.childPIDs.first { DashboardTmux.command(of: $0) == "testfleet" }, "no demo process")
        started = [(demoPID, "testfleet")] + DashboardTmux.children(of: demoPID).compactMap { pid in
            DashboardTmux.command(of: pid).map { (pid, $0) }
        }
        // Three fleet hosts, the bastion and the host behind it.
        XCTAssertEqual(started.filter { $0.command == "sshd" }.count, 5, "\(started)")
        XCTAssertEqual(started.filter { $0.command == "fleettrust" }.count, 1, "\(started)")

        let killed = Date()
        terminal.killSession()
        let survivors = DashboardTmux.waitUntilGone(started, timeout: 10)
        let elapsed = Date().timeIntervalSince(killed)
        XCTAssertTrue(survivors.isEmpty, "still running 10 s after the pane was killed: \(survivors)")
        print("killing the pane: the dashboard, the demo and its \(started.count - 2) sshd were gone after \(String(format: "%.2f", elapsed)) s")
        return elapsed
    }

    /// The pane's shell dies of the hang-up, and the kernel sends SIGHUP to everything in the
    /// foreground: the demo must not die of it before stopping its fleet (sshd itself survives SIGHUP).
    func testKillingTheDemosTmuxPaneStopsTheDashboardTheDemoAndEverySshdItStarted() throws {
        XCTAssertLessThan(try killTheDemosSession { "\($0); exec sleep 600" }, 5)
    }

    /// When the pane's first process catches SIGHUP and waits for its children, as `make` does
    /// (`make demo`), nothing else is sent a signal: the dashboard must notice the hang-up on its
    /// terminal, where reads now return at once, instead of spinning on them at a full core.
    func testWhenNoSIGHUPReachesTheDashboardTheHangUpOfItsTerminalStillEndsItAndTheDemo() throws {
        XCTAssertLessThan(try killTheDemosSession { "trap '' HUP; \($0); :" }, 5)
    }

    // MARK: Standard input is not a terminal

    func testWithTheInventoryOnAPipeKeysAreReadFromTheTerminalAndTheDashboardIdles() throws {
        let command = [DashboardTmux.executable, "--inventory", "-", "--known-hosts", scratch + "/known_hosts", "--read-only"]
            .map(DashboardTmux.quote).joined(separator: " ")
        let terminal = try DashboardTmux(script: "cat \(DashboardTmux.quote(refusingInventory)) | env \(DashboardTmux.environment()) \(command); echo \(DashboardTmux.exitMarker)$?; exec sleep 600",
                                         width: 120, height: 30)
        self.terminal = terminal
        let (listed, screen) = terminal.waitFor(settled)
        XCTAssertTrue(listed, screen)
        XCTAssertTrue(screen.contains("inventory - (6 hosts)"), screen)
        let dashboardPID = try XCTUnwrap(terminal.childPIDs.first { DashboardTmux.command(of: $0) == "fleettrust" })
        let before = try XCTUnwrap(DashboardTmux.cpuSeconds(of: dashboardPID))
        terminal.send("?")
        let (shown, helpScreen) = terminal.waitFor { $0.contains("move down") }
        XCTAssertTrue(shown, "keys typed in the terminal were not read: \(helpScreen)")
        // The measuring window, not a wait: no event marks idleness, so CPU is measured over a second.
        usleep(1_000_000)
        let used = try XCTUnwrap(DashboardTmux.cpuSeconds(of: dashboardPID)) - before
        XCTAssertLessThan(used, 0.3, "an idle dashboard used \(used) s of CPU in about a second")
        terminal.send("Escape", "q")
        let (ended, after) = exited(terminal, status: 0)
        XCTAssertTrue(ended, after)
    }

    func testAKnownHostsFileThatDoesNotExistIsMarkedInTheHeader() throws {
        try FileManager.default.createDirectory(atPath: scratch + "/d", withIntermediateDirectories: true)
        try "".write(toFile: scratch + "/d/present", atomically: true, encoding: .utf8)
        let terminal = try DashboardTmux(arguments: ["--inventory", refusingInventory, "--known-hosts", scratch + "/d/present",
                                                     "--known-hosts", scratch + "/d/typo", "--read-only"], width: 400, height: 30)
        self.terminal = terminal
        let (settled, screen) = terminal.waitFor { self.settled($0) }
        XCTAssertTrue(settled, screen)
        let header = screen.split(separator: "\n").first.map(String.init) ?? ""
        XCTAssertTrue(header.contains(" READ-ONLY  known_hosts file missing "), header)
        let files = try XCTUnwrap(header.range(of: " known_hosts /").map { header[$0.lowerBound...] }, header)
        XCTAssertTrue(files.contains("/d/present, \(scratch)/d/typo (no such file at start)"), header)
        terminal.send("q")
    }

    func testWithNoTerminalAtAllTheDashboardRefusesInOneSentenceAndExits64() throws {
        let command = ["setsid", "-w", DashboardTmux.executable, "--inventory", refusingInventory].map(DashboardTmux.quote).joined(separator: " ")
        let terminal = try DashboardTmux(script: "env \(DashboardTmux.environment()) \(command) </dev/null; echo \(DashboardTmux.exitMarker)$?; exec sleep 600")
        self.terminal = terminal
        let (ended, screen) = exited(terminal, status: 64)
        XCTAssertTrue(ended, screen)
        XCTAssertTrue(screen.contains("fleettrust: standard input is not a terminal and there is no controlling terminal (/dev/tty)"), screen)
        XCTAssertEqual(screen.components(separatedBy: "fleettrust:").count, 2, screen)
    }

    // MARK: Terminal types and locales

    func testAnUnknownTerminalTypeAndTheDumbTerminalAreRefusedInOneSentenceWithExit64() throws {
        let unknown = try dashboard(environment: ["TERM": "vt-no-such-terminal"])
        let (refused, screen) = exited(unknown, status: 64)
        XCTAssertTrue(refused, screen)
        XCTAssertTrue(screen.contains("fleettrust: TERM=vt-no-such-terminal is not a terminal type this system's terminfo knows"), screen)
        unknown.stop()

        let dumb = try dashboard(environment: ["TERM": "dumb"])
        let (refusedDumb, dumbScreen) = exited(dumb, status: 64)
        XCTAssertTrue(refusedDumb, dumbScreen)
        XCTAssertTrue(dumbScreen.contains("fleettrust: TERM=dumb cannot move the cursor"), dumbScreen)
    }

    /// In `LANG=C` curses cannot encode `…`, `·`, `↑↓`: the screen is the UTF-8 one with ASCII
    /// look-alikes in the same columns, not one with blanks.
    func testALocaleThatIsNotUTF8GetsTheSameScreenWithASCIILookAlikes() throws {
        let utf8 = try dashboard()
        let (listed, unicodeScreen) = utf8.waitFor(settled)
        XCTAssertTrue(listed, unicodeScreen)
        XCTAssertTrue(unicodeScreen.contains("…") && unicodeScreen.contains("·") && unicodeScreen.contains("↑↓"), unicodeScreen)
        utf8.send("q")
        XCTAssertTrue(exited(utf8, status: 0).0)
        utf8.stop()

        let ascii = try dashboard(environment: ["LANG": "C", "LC_ALL": "C"])
        let (asciiListed, asciiScreen) = ascii.waitFor(settled)
        XCTAssertTrue(asciiListed, asciiScreen)
        var expected = unicodeScreen
        for (glyph, lookAlike) in [("…", "~"), ("·", "-"), ("↑", "^"), ("↓", "v")] {
            expected = expected.replacingOccurrences(of: glyph, with: lookAlike)
        }
        XCTAssertEqual(asciiScreen, expected)
        XCTAssertTrue(asciiScreen.unicodeScalars.allSatisfy(\.isASCII), asciiScreen)
        ascii.send("q")
        XCTAssertTrue(exited(ascii, status: 0).0)
    }

    /// tmux and PuTTY send `ESC [ 1 ~` and `ESC [ 4 ~` for Home and End, which xterm's terminfo
    /// entry does not list (it has `ESC O H` and `ESC O F`).
    func testOnAVT100WithoutAnAlternateScreenQuittingLeavesNoFrameUnderTheShell() throws {
        let terminal = try dashboard(environment: ["TERM": "vt100"])
        let (shown, screen) = terminal.waitFor { self.settled($0) }
        XCTAssertTrue(shown, screen)
        terminal.send("q")
        let (ended, after) = exited(terminal, status: 0)
        XCTAssertTrue(ended, after)
        XCTAssertFalse(after.contains("unreachable") || after.contains("STATUS"), "the last frame stayed on screen: \(after)")
    }

    func testHomeAndEndWorkWithTheSequencesTmuxAndPuTTYSendUnderAnXtermTERM() throws {
        let terminal = try dashboard(environment: ["TERM": "xterm-256color"])
        XCTAssertTrue(terminal.waitFor(settled).0, terminal.capture())
        func detailTitle(after keys: () -> Void) -> String {
            keys()
            terminal.send("Enter")
            let (shown, screen) = terminal.waitFor { $0.contains("failed at connect") }
            XCTAssertTrue(shown, screen)
            terminal.send("Escape")
            XCTAssertTrue(terminal.waitFor { $0.contains("ADDRESS:PORT") }.0, terminal.capture())
            return String(screen.split(separator: "\n", omittingEmptySubsequences: false)[2])
        }
        XCTAssertTrue(detailTitle { terminal.send("End") }.contains("127.0.0.6:1"), "tmux's End")
        XCTAssertTrue(detailTitle { terminal.sendBytes([0x1b, 0x5b, 0x31, 0x7e]) }.contains("127.0.0.1:1"), "ESC [ 1 ~")
        XCTAssertTrue(detailTitle { terminal.sendBytes([0x1b, 0x5b, 0x34, 0x7e]) }.contains("127.0.0.6:1"), "ESC [ 4 ~")
        XCTAssertTrue(detailTitle { terminal.send("Home") }.contains("127.0.0.1:1"), "tmux's Home")
        terminal.send("q")
        XCTAssertTrue(exited(terminal, status: 0).0)
    }

    // MARK: Colour

    /// On 8 colours the default theme's grey (bright black) used to become bold black, unreadable
    /// on a dark background; it is drawn dim in the terminal's own colour.
    func testOnEightColourTerminalsGreyTextIsDimNotBoldBlack() throws {
        let terminal = try dashboard(environment: ["TERM": "screen"])
        XCTAssertTrue(terminal.waitFor(settled).0, terminal.capture())
        let screen = terminal.captureWithAttributes()
        let row = try XCTUnwrap(screen.split(separator: "\n").first { $0.contains("U unreachable") && $0.contains("127.0.0.2") }, screen)
        let drawn = DashboardTmux.graphicRendition(before: "U unreachable", in: row)
        XCTAssertTrue(drawn.attributes.contains(2), "not dim: \(row.debugDescription)")
        XCTAssertFalse(drawn.attributes.contains(1), "bold: \(row.debugDescription)")
        XCTAssertNil(drawn.foreground, "not the terminal's own colour: \(row.debugDescription)")
        terminal.send("q")
        XCTAssertTrue(exited(terminal, status: 0).0)
    }

    /// With `NO_COLOR`, changed and revoked hosts are in reverse video, as in the monochrome theme,
    /// not merely bold like new ones.
    func testWithNoColourChangedAndRevokedHostsStandOutInReverseVideo() throws {
        var options = TestFleet.Options(hosts: 5)
        options.rsaBits = 2048
        let fleet = try TestFleet(options)
        self.fleet = fleet
        let terminal = try DashboardTmux(arguments: ["--inventory", fleet.inventoryPath, "--known-hosts", fleet.knownHostsPath, "--read-only"],
                                         environment: ["NO_COLOR": "1"])
        self.terminal = terminal
        XCTAssertTrue(terminal.waitFor { $0.contains("C 1 changed") && $0.contains("R 1 revoked") && !$0.contains("scanning") }.0,
                      terminal.capture())
        let screen = terminal.captureWithAttributes()
        func status(_ host: Int, _ text: String) throws -> Set<Int> {
            let label = fleet.hosts[host].endpoints[0].label + " "
            let row = try XCTUnwrap(screen.split(separator: "\n").first { $0.contains(label) }, screen)
            return DashboardTmux.graphicRendition(before: text, in: row).attributes
        }
        XCTAssertTrue(try status(3, "C changed").contains(7), "changed is not in reverse video")
        XCTAssertTrue(try status(4, "R revoked").contains(7), "revoked is not in reverse video")
        XCTAssertFalse(try status(2, "N new").contains(7), "new is in reverse video too")
        terminal.send("q")
        XCTAssertTrue(exited(terminal, status: 0).0)
    }
}
