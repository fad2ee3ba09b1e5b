import FleetTrustCore
import FleetTrustTestFleet
import Foundation
import XCTest

/// The dashboard in a real terminal (tmux) against the real sshd fleet.
final class DashboardTests: XCTestCase {
    private var fleet: TestFleet?
    private var terminal: DashboardTmux?
    private var scratch = ""

    override func setUpWithError() throws {
        scratch = NSTemporaryDirectory() + "dashboard-e2e-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() {
        terminal?.stop()
        fleet?.stop()
        try? FileManager.default.removeItem(atPath: scratch)
    }

    private func open(_ fleet: TestFleet, _ extra: [String] = [], width: Int = 160, height: Int = 45,
                      environment: [String: String] = [:]) throws -> DashboardTmux {
        let terminal = try DashboardTmux(arguments: ["--inventory", fleet.inventoryPath, "--known-hosts", scratch + "/known_hosts",
                                                     "--audit-log", scratch + "/audit.jsonl"] + extra,
                                         width: width, height: height, environment: environment)
        self.terminal = terminal
        return terminal
    }

    private func keygenFingerprint(_ publicKeyFile: String) throws -> String {
        let output = try DashboardTmux.run(["/usr/bin/ssh-keygen", "-lf", publicKeyFile], readingOutput: true)
        return String(output.split(separator: " ")[1])
    }

    private func assertRestored(_ terminal: DashboardTmux, status: Int, file: StaticString = #filePath, line: UInt = #line) {
        let (ended, screen) = terminal.waitFor { $0.contains("\(DashboardTmux.exitMarker)\(status)\n") && $0.contains("icanon") }
        XCTAssertTrue(ended, screen, file: file, line: line)
        XCTAssertTrue(screen.contains("icanon echo"), "terminal modes not restored: \(screen)", file: file, line: line)
        XCTAssertFalse(terminal.alternateScreenOn, "still on the alternate screen", file: file, line: line)
        // The pane's stty pipeline may still be exiting under load; the dashboard must be gone by
        // the time the shell has exec'd its final sleep.
        let deadline = Date().addingTimeInterval(10)
        while !terminal.childPIDs.isEmpty && Date() < deadline { usleep(50_000) }
        XCTAssertEqual(terminal.childPIDs.count, 0, "the dashboard process is still running", file: file, line: line)
    }

    /// `--inventory DIR` of an Ansible inventory directory: hosts named only by alias in its
    /// inventory file get their addresses and ports from `group_vars/` and `host_vars/`, and the
    /// dashboard probes them there: every row fills in with the key `ssh-keygen` reports.
    func testAnAnsibleInventoryDirectoryIsResolvedThroughItsVarsDirectories() throws {
        let fleet = try TestFleet.start(hosts: 2)
        self.fleet = fleet
        let inventory = scratch + "/inventory"
        for directory in ["group_vars", "host_vars"] {
            try FileManager.default.createDirectory(atPath: inventory + "/" + directory, withIntermediateDirectories: true)
        }
        try "[fleet]\napp1\napp2\n".write(toFile: inventory + "/hosts", atomically: true, encoding: .utf8)
        try "ansible_host: \(fleet.hosts[0].address)\nansible_user: deploy\n"
            .write(toFile: inventory + "/group_vars/fleet.yml", atomically: true, encoding: .utf8)
        try "ansible_port: \(fleet.hosts[0].port)\n".write(toFile: inventory + "/host_vars/app1.yml", atomically: true, encoding: .utf8)
        try "ansible_host: \(fleet.hosts[1].address)\nansible_port: \(fleet.hosts[1].port)\n"
            .write(toFile: inventory + "/host_vars/app2.yml", atomically: true, encoding: .utf8)
        let terminal = try DashboardTmux(arguments: ["--inventory", inventory, "--known-hosts", scratch + "/known_hosts",
                                                     "--audit-log", scratch + "/audit.jsonl"])
        self.terminal = terminal
        let fingerprints = try fleet.hosts.map { host in try keygenFingerprint(host.publicKeyFiles.first { $0.contains("ed25519") }!) }
        let (filled, screen) = terminal.waitFor(timeout: 30) { screen in fingerprints.allSatisfy { screen.contains($0) } }
        XCTAssertTrue(filled, screen)
        for (name, (host, fingerprint)) in zip(["app1", "app2"], zip(fleet.hosts, fingerprints)) {
            let row = screen.split(separator: "\n").first { $0.contains(name + " ") }
            XCTAssertTrue(row?.contains(host.endpoints[0].label) ?? false, "\(name) not resolved to \(host.endpoints[0].label): \(screen)")
            XCTAssertTrue(row?.contains(fingerprint) ?? false, row.map(String.init) ?? screen)
        }
        XCTAssertTrue(screen.contains("inventory \(inventory) (2 hosts)"), screen)
        terminal.send("q")
        assertRestored(terminal, status: 0)
    }

    /// A real mouse report, as the terminal sends it, moves the selection to the row under it:
    /// Enter then opens that host, not the first one.
    func testAMouseClickSelectsTheRowUnderIt() throws {
        let fleet = try TestFleet.start(hosts: 3)
        self.fleet = fleet
        let terminal = try open(fleet)
        let labels = fleet.hosts.map { $0.endpoints[0].label + " " }
        let (listed, screen) = terminal.waitFor { s in labels.allSatisfy { s.contains($0) } && !s.contains("scanning") }
        XCTAssertTrue(listed, screen)
        let rows = screen.split(separator: "\n", omittingEmptySubsequences: false)
        let row = try XCTUnwrap(rows.firstIndex { $0.contains(labels[2]) }, screen)
        let ed25519 = try keygenFingerprint(fleet.hosts[2].publicKeyFiles.first { $0.contains("ed25519") && !$0.contains("cert") }!)
        let firstHost = try keygenFingerprint(fleet.hosts[0].publicKeyFiles.first { $0.contains("ed25519") && !$0.contains("cert") }!)
        // A report's six bytes start with ESC: on a loaded machine the terminal may deliver them
        // later than the escape delay, and curses then reads an Escape key. A click that never
        // selects the row under it fails all three tries.
        var detailed = false, detail = ""
        for _ in 0..<3 where !detailed {
            terminal.click(column: 20, row: row)
            terminal.send("Enter")
            (detailed, detail) = terminal.waitFor { $0.contains("+----[SHA256]-----+") && ($0.contains(ed25519) || $0.contains(firstHost)) }
            detailed = detailed && detail.contains(ed25519)
            if !detailed { terminal.send("Escape") }
        }
        XCTAssertTrue(detailed, detail)
        XCTAssertFalse(detail.contains(firstHost), "the detail is of the clicked host, not the first one")
        terminal.send("Escape", "q")
        assertRestored(terminal, status: 0)
    }

    func testTheListFillsInFingerprintsEqualToSshKeygenAndQRestoresTheTerminal() throws {
        let fleet = try TestFleet.start(hosts: 3)
        self.fleet = fleet
        let terminal = try open(fleet)
        var expected: [String] = []
        for host in fleet.hosts {
            let ed25519 = host.publicKeyFiles.first { $0.contains("ed25519") }!
            expected.append(try keygenFingerprint(ed25519))
        }
        let (filled, screen) = terminal.waitFor { screen in expected.allSatisfy { screen.contains($0) } }
        XCTAssertTrue(filled, screen)
        for (host, fingerprint) in zip(fleet.hosts, expected) {
            let row = screen.split(separator: "\n").first { $0.contains(host.endpoints[0].label + " ") }
            XCTAssertNotNil(row, "no row for \(host.endpoints[0].label)")
            XCTAssertTrue(row?.contains(fingerprint) ?? false, "\(row ?? "")")
            XCTAssertTrue(row?.contains("ED25519 ECD") ?? false, "\(row ?? "")")
        }
        terminal.send("Enter")
        let keyFiles = fleet.hosts[0].publicKeyFiles.filter { !$0.contains("cert") }
        let all = try keyFiles.map(keygenFingerprint)
        let (detailed, detail) = terminal.waitFor { screen in all.allSatisfy { screen.contains($0) } }
        XCTAssertTrue(detailed, detail)
        XCTAssertTrue(detail.contains("+----[SHA256]-----+"), detail)
        terminal.send("Escape", "q")
        assertRestored(terminal, status: 0)
    }

    func testTrustThenYWritesAnEntryWithWhichRealSshPassesHostKeyChecking() throws {
        let fleet = try TestFleet.start(hosts: 1)
        self.fleet = fleet
        let host = fleet.hosts[0]
        let knownHosts = scratch + "/known_hosts"
        XCTAssertEqual(try SSHOracle.check(name: host.address, port: host.port, knownHosts: knownHosts).verdict, .unknown)
        // The file does not exist yet: --create says it is meant to be made.
        let terminal = try open(fleet, ["--create"])
        XCTAssertTrue(terminal.waitFor { $0.contains("N new") }.0)
        terminal.send("t")
        let (asked, confirmation) = terminal.waitFor { $0.contains("Trust 1 host?") }
        XCTAssertTrue(asked, confirmation)
        XCTAssertTrue(confirmation.contains("saved as: \(host.knownHostsName)"), confirmation)
        terminal.send("y")
        let (saved, after) = terminal.waitFor { $0.contains("Trusted \(host.endpoints[0].label);") && $0.contains("T trusted") }
        XCTAssertTrue(saved, after)
        XCTAssertEqual(try SSHOracle.check(name: host.address, port: host.port, knownHosts: knownHosts).verdict, .trusted)
        let audit = try String(contentsOfFile: scratch + "/audit.jsonl", encoding: .utf8)
        XCTAssertTrue(audit.contains("\"action\":\"trust\""), audit)
        terminal.send("q")
        assertRestored(terminal, status: 0)
    }

    func testReadOnlyModeRefusesToTrustAndWritesNothing() throws {
        let fleet = try TestFleet.start(hosts: 1)
        self.fleet = fleet
        let terminal = try open(fleet, ["--read-only"])
        XCTAssertTrue(terminal.waitFor { $0.contains("N new") && $0.contains("READ-ONLY") }.0)
        terminal.send("t")
        let (refused, screen) = terminal.waitFor { $0.contains("Read-only mode") }
        XCTAssertTrue(refused, screen)
        terminal.send("y", "q")
        assertRestored(terminal, status: 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch + "/known_hosts"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch + "/audit.jsonl"))
    }

    func testFilterAndSortWorkInTheTerminal() throws {
        let fleet = try TestFleet.start(hosts: 3)
        self.fleet = fleet
        let terminal = try open(fleet)
        let labels = fleet.hosts.map { $0.endpoints[0].label }
        XCTAssertTrue(terminal.waitFor { s in labels.allSatisfy { s.contains($0 + " ") } && !s.contains("scanning") }.0)
        terminal.send("/")
        terminal.type(String(fleet.hosts[1].port))
        terminal.send("Enter")
        let (filtered, screen) = terminal.waitFor { $0.contains("1 shown") }
        XCTAssertTrue(filtered, screen)
        XCTAssertTrue(screen.contains(labels[1] + " "))
        XCTAssertFalse(screen.contains(labels[0] + " ") || screen.contains(labels[2] + " "), screen)
        terminal.send("/", "Escape", "s", "s", "s")
        let (sorted, byAddress) = terminal.waitFor { $0.contains("3 shown · sort address") }
        XCTAssertTrue(sorted, byAddress)
        let order = labels.sorted { Int($0.split(separator: ":")[1])! < Int($1.split(separator: ":")[1])! }
        let positions = order.map { byAddress.range(of: $0 + " ")!.lowerBound }
        XCTAssertEqual(positions, positions.sorted(), byAddress)
        terminal.send("q")
        assertRestored(terminal, status: 0)
    }

    func testCtrlUClearsTheFilterPromptAsReadlineDoes() throws {
        let fleet = try TestFleet.start(hosts: 2)
        self.fleet = fleet
        let terminal = try open(fleet)
        let labels = fleet.hosts.map { $0.endpoints[0].label }
        XCTAssertTrue(terminal.waitFor { s in labels.allSatisfy { s.contains($0 + " ") } }.0)
        terminal.send("/")
        terminal.type("no-such-host")
        let (nothing, typed) = terminal.waitFor { $0.contains("0 shown") }
        XCTAssertTrue(nothing, typed)
        terminal.send("C-u")
        terminal.type(String(fleet.hosts[1].port))
        terminal.send("Enter")
        let (filtered, screen) = terminal.waitFor { $0.contains("1 shown") }
        XCTAssertTrue(filtered, screen)
        XCTAssertTrue(screen.contains(labels[1] + " "), screen)
        XCTAssertFalse(screen.contains("no-such-host"), screen)
        terminal.send("q")
        assertRestored(terminal, status: 0)
    }

    func testResizingTheWindowRedrawsTheListForTheNewWidth() throws {
        let fleet = try TestFleet.start(hosts: 2)
        self.fleet = fleet
        let terminal = try open(fleet)
        XCTAssertTrue(terminal.waitFor { $0.contains("METHOD") && $0.contains("N 2 new") }.0)
        terminal.resize(width: 90, height: 20)
        let (redrawn, screen) = terminal.waitFor { !$0.contains("METHOD") && $0.contains("FINGERPRINT") }
        XCTAssertTrue(redrawn, screen)
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertTrue(lines[0].contains("fleettrust"), screen)
        XCTAssertTrue(lines.allSatisfy { $0.count <= 90 })
        XCTAssertTrue(lines.contains { $0.contains(fleet.hosts[1].endpoints[0].label) }, screen)
        terminal.send("q")
        assertRestored(terminal, status: 0)
    }

    func testCtrlCRestoresTheTerminal() throws {
        let fleet = try TestFleet.start(hosts: 1)
        self.fleet = fleet
        let terminal = try open(fleet)
        XCTAssertTrue(terminal.waitFor { $0.contains("fleettrust") && $0.contains("STATUS") }.0)
        terminal.send("C-c")
        assertRestored(terminal, status: 130)
    }

    func testABadThemeFileIsReportedWithItsLineAndTheTerminalIsUntouched() throws {
        let fleet = try TestFleet.start(hosts: 1)
        self.fleet = fleet
        let theme = scratch + "/bad.theme"
        try "normal = default, default\nheader = mauve, blue\n".write(toFile: theme, atomically: true, encoding: .utf8)
        let terminal = try open(fleet, ["--theme", theme])
        let (reported, screen) = terminal.waitFor { $0.contains(DashboardTmux.exitMarker) }
        XCTAssertTrue(reported, screen)
        XCTAssertTrue(screen.contains("bad.theme:2: unknown colour 'mauve'"), screen)
        XCTAssertFalse(screen.contains("\(DashboardTmux.exitMarker)0"), screen)
    }

    func testNoColorDrawsWithAttributesOnlyAndEightColourTerminalsStillGetColour() throws {
        let fleet = try TestFleet.start(hosts: 1)
        self.fleet = fleet
        let colourCodes = try NSRegularExpression(pattern: "\u{1b}\\[[0-9;]*(3[0-7]|4[0-7]|38;5;[0-9]+|9[0-7])[;m]")
        func colours(_ text: String) -> Int { colourCodes.numberOfMatches(in: text, range: NSRange(text.startIndex..., in: text)) }

        let plain = try open(fleet, environment: ["NO_COLOR": "1"])
        XCTAssertTrue(plain.waitFor { $0.contains("N new") }.0)
        let monochrome = plain.captureWithAttributes()
        XCTAssertEqual(colours(monochrome), 0, monochrome)
        XCTAssertTrue(monochrome.contains("\u{1b}[7m") || monochrome.contains(";7m"), "no reverse video: \(monochrome)")
        plain.send("q")
        assertRestored(plain, status: 0)
        plain.stop()

        let eight = try open(fleet, environment: ["TERM": "screen"])
        XCTAssertTrue(eight.waitFor { $0.contains("N new") }.0)
        let coloured = eight.captureWithAttributes()
        XCTAssertGreaterThan(colours(coloured), 0, coloured)
        XCTAssertFalse(coloured.contains("38;5;"), coloured)
        eight.send("q")
        assertRestored(eight, status: 0)
    }
}
