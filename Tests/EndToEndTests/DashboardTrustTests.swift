import FleetTrustCore
import FleetTrustTestFleet
import Foundation
import XCTest

private extension String {
    func appendLine(to path: String) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(utf8))
    }
}

/// The dashboard's decisions against real known_hosts files, the real fleet and real `ssh`.
final class DashboardTrustTests: XCTestCase {
    private var fleet: TestFleet?
    private var terminal: DashboardTmux?
    private var scratch = ""
    private var knownHosts: String { scratch + "/known_hosts" }

    override func setUpWithError() throws {
        scratch = NSTemporaryDirectory() + "dashboard-trust-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let fleet = try TestFleet.start(hosts: 5)
        self.fleet = fleet
        try FileManager.default.copyItem(atPath: fleet.knownHostsPath, toPath: knownHosts)
    }

    override func tearDown() {
        terminal?.stop()
        fleet?.stop()
        try? FileManager.default.removeItem(atPath: scratch)
    }

    private func open(_ extra: [String] = [], width: Int = 160, height: Int = 45) throws -> DashboardTmux {
        FileManager.default.createFile(atPath: scratch + "/pins", contents: Data())
        let terminal = try DashboardTmux(arguments: ["--inventory", fleet!.inventoryPath, "--known-hosts", knownHosts,
                                                     "--audit-log", scratch + "/audit.jsonl", "--pins", scratch + "/pins"] + extra,
                                         width: width, height: height)
        self.terminal = terminal
        XCTAssertTrue(terminal.waitFor { !$0.contains("scanning") && $0.contains("C 1 changed") }.0, terminal.capture())
        return terminal
    }

    /// Selects host `index` by filtering on its unique port.
    private func select(_ terminal: DashboardTmux, host index: Int) {
        terminal.send("/")
        terminal.type(":\(fleet!.hosts[index].port)")
        terminal.send("Enter")
        XCTAssertTrue(terminal.waitFor { $0.contains("1 shown") }.0, terminal.capture())
    }

    private func row(_ screen: String, host index: Int) -> String {
        let label = fleet!.hosts[index].endpoints[0].label + " "
        return screen.split(separator: "\n").first { $0.contains(label) }.map(String.init) ?? ""
    }

    func testEachSampleHostShowsTheVerdictRealSshWouldGive() throws {
        let terminal = try open()
        let screen = terminal.capture()
        let expected = ["T trusted", "T trusted", "N new", "C changed", "R revoked"]
        for (index, status) in expected.enumerated() {
            XCTAssertTrue(row(screen, host: index).contains(status), "host \(index): \(row(screen, host: index))")
        }
        XCTAssertTrue(row(screen, host: 0).contains(" ok-CA "), row(screen, host: 0))
        XCTAssertTrue(row(screen, host: 0).contains(" ca"), row(screen, host: 0))
        XCTAssertTrue(row(screen, host: 1).contains(" ok "), row(screen, host: 1))
        XCTAssertTrue(row(screen, host: 1).contains(" kh"), row(screen, host: 1))
        let oracle = try (0..<5).map { try SSHOracle.check(name: fleet!.hosts[$0].address, port: fleet!.hosts[$0].port, knownHosts: knownHosts).verdict }
        XCTAssertEqual(oracle, [.trustedByCA, .trusted, .unknown, .changed, .revoked])
    }

    func testAChangedKeyIsNotSavedByYAndIsReplacedByTypingTheHostName() throws {
        let terminal = try open()
        let host = fleet!.hosts[3]
        let before = try String(contentsOfFile: knownHosts, encoding: .utf8)
        select(terminal, host: 3)
        terminal.send("t")
        let (shown, warning) = terminal.waitFor { $0.contains("HAS CHANGED") }
        XCTAssertTrue(shown, warning)
        let recordedLine = before.split(separator: "\n", omittingEmptySubsequences: false)
            .firstIndex { $0.hasPrefix(host.knownHostsName + " ") }.map { $0 + 1 } ?? 0
        XCTAssertTrue(warning.contains("\(knownHosts):\(recordedLine)"), warning)
        XCTAssertTrue(warning.contains(host.key(ofType: "ssh-ed25519")!.sha256Fingerprint), warning)
        terminal.send("y", "Enter")
        XCTAssertTrue(terminal.waitFor { $0.contains("nothing was saved") }.0, terminal.capture())
        XCTAssertEqual(try String(contentsOfFile: knownHosts, encoding: .utf8), before)

        terminal.send("t")
        XCTAssertTrue(terminal.waitFor { $0.contains("HAS CHANGED") }.0)
        terminal.type(host.endpoints[0].label)
        terminal.send("Enter")
        let (replaced, after) = terminal.waitFor { $0.contains("Replaced the key") }
        XCTAssertTrue(replaced, after)
        XCTAssertTrue(terminal.waitFor { $0.contains("T 1 trusted") || $0.contains("T trusted") }.0, terminal.capture())
        XCTAssertEqual(try SSHOracle.check(name: host.address, port: host.port, knownHosts: knownHosts).verdict, .trusted)
        let audit = try String(contentsOfFile: scratch + "/audit.jsonl", encoding: .utf8)
        XCTAssertTrue(audit.contains("\"action\":\"replace\""), audit)
        XCTAssertTrue(audit.contains("old_entries"), audit)
    }

    func testARevokedHostCannotBeTrustedAndTheDashboardSaysWhy() throws {
        try ("@cert-authorty * " + fleet!.hosts[1].publicKeys[0].openSSHLine + "\n").appendLine(to: knownHosts)
        let terminal = try open()
        XCTAssertTrue(terminal.capture().contains("ssh ignores line"), "the first notice names the line ssh ignores: \(terminal.capture())")
        select(terminal, host: 4)
        terminal.send("t")
        let (refused, screen) = terminal.waitFor { $0.contains("cannot be trusted here") }
        XCTAssertTrue(refused, screen)
        XCTAssertTrue(screen.contains("is revoked by @revoked at"), screen)
        XCTAssertTrue(screen.contains("\(knownHosts):"), "the line is named, wrapped but not cut: \(screen)")
    }

    func testConnectHandsTheTerminalToSshWithStrictCheckingAndComesBack() throws {
        let log = scratch + "/ssh.log"
        let wrapper = scratch + "/connect.sh"
        try """
            #!/bin/sh
            echo "args: $*" > '\(log)'
            ssh -F /dev/null -o BatchMode=yes -o PubkeyAuthentication=no -o PasswordAuthentication=no \
                -o KbdInteractiveAuthentication=no -o GlobalKnownHostsFile=/dev/null "$@" true 2>> '\(log)'
            status=$?
            echo "exit=$status" >> '\(log)'
            exit $status
            """.write(toFile: wrapper, atomically: true, encoding: .utf8)
        chmod(wrapper, 0o755)
        let terminal = try open(["--connect-command", "\(wrapper) {options} -p {port} fleettrust-test@{host}"])
        select(terminal, host: 1)
        terminal.send("c")
        let (paused, ssh) = terminal.waitFor { $0.contains("press Enter to return to the dashboard") }
        XCTAssertTrue(paused, "ssh failed, so its last words stay on screen until Enter: \(ssh)")
        terminal.send("Enter")
        let (back, screen) = terminal.waitFor { $0.contains("exited with status 255") }
        XCTAssertTrue(back, screen)
        XCTAssertTrue(screen.contains("fleettrust") && screen.contains("STATUS"), screen)
        let transcript = try String(contentsOfFile: log, encoding: .utf8)
        XCTAssertTrue(transcript.contains("-o StrictHostKeyChecking=yes -o UserKnownHostsFile=\"\(knownHosts)\""), transcript)
        XCTAssertTrue(transcript.contains("Permission denied"), transcript)
        XCTAssertFalse(transcript.contains("REMOTE HOST IDENTIFICATION HAS CHANGED"), transcript)
        terminal.send("q")
        XCTAssertTrue(terminal.waitFor { $0.contains(DashboardTmux.exitMarker + "0") }.0, terminal.capture())
    }

    func testConnectIsRefusedForAHostThatIsNotTrusted() throws {
        let terminal = try open(["--connect-command", "/bin/false"])
        select(terminal, host: 2)
        terminal.send("c")
        XCTAssertTrue(terminal.waitFor { $0.contains("Connect is only for trusted hosts") }.0, terminal.capture())
    }

    func testForgetShowsTheLinesAndRemovesThemAsSshKeygenR() throws {
        let terminal = try open()
        let host = fleet!.hosts[1]
        select(terminal, host: 1)
        terminal.send("x")
        let (asked, confirmation) = terminal.waitFor { $0.contains("These known_hosts lines will be removed") && $0.contains("removes them") }
        XCTAssertTrue(asked, confirmation)
        XCTAssertTrue(confirmation.contains(knownHosts + ":3"), confirmation)
        terminal.send("y")
        XCTAssertTrue(terminal.waitFor { $0.contains("Forgot") }.0, terminal.capture())
        let remaining = try String(contentsOfFile: knownHosts, encoding: .utf8)
        XCTAssertFalse(remaining.contains(host.knownHostsName + " "), remaining)
        XCTAssertTrue(remaining.contains(fleet!.hosts[3].knownHostsName + " "), remaining)
        XCTAssertEqual(try SSHOracle.check(name: host.address, port: host.port, knownHosts: knownHosts).verdict, .unknown)
    }

    func testForgetShowsThePatternAndNegatedLinesItKeepsAndKeepsThem() throws {
        let host = fleet!.hosts[1]
        let key = host.key(ofType: "ssh-ed25519")!.openSSHLine
        let pattern = "[\(host.address.dropLast())?]:\(host.port) \(key)"
        let negated = "\(host.knownHostsName),!no-such-host \(key)"
        try (String(contentsOfFile: knownHosts, encoding: .utf8) + pattern + "\n" + negated + "\n")
            .write(toFile: knownHosts, atomically: true, encoding: .utf8)
        let terminal = try open()
        select(terminal, host: 1)
        terminal.send("x")
        let (asked, dialog) = terminal.waitFor { $0.contains("KEPT") && $0.contains("removes them") }
        XCTAssertTrue(asked, dialog)
        XCTAssertTrue(dialog.contains("a pattern line") && dialog.contains("a negated pattern list"), dialog)
        terminal.send("y")
        let (done, screen) = terminal.waitFor { $0.contains("Forgot") }
        XCTAssertTrue(done, screen)
        XCTAssertTrue(screen.contains("kept, as shown"), screen)
        XCTAssertFalse(screen.contains("its entries were removed"), screen)
        let after = try String(contentsOfFile: knownHosts, encoding: .utf8)
        XCTAssertTrue(after.contains(pattern + "\n") && after.contains(negated + "\n"), after)
        XCTAssertFalse(after.split(separator: "\n").contains { $0.hasPrefix(host.knownHostsName + " ") }, after)
        XCTAssertEqual(try SSHOracle.check(name: host.address, port: host.port, knownHosts: knownHosts).verdict, .trusted,
                       "ssh still trusts it through the kept lines, as the dialog said")
    }

    func testForgettingAChangedHostTakesTypingItsNameAndTheAuditLogSaysSo() throws {
        let terminal = try open()
        let host = fleet!.hosts[3]
        let before = try String(contentsOfFile: knownHosts, encoding: .utf8)
        select(terminal, host: 3)
        terminal.send("x")
        XCTAssertTrue(terminal.waitFor { $0.contains("IS CHANGED") && $0.contains("host name>") }.0, terminal.capture())
        terminal.send("y", "Enter")
        XCTAssertTrue(terminal.waitFor { $0.contains("did not match") }.0, terminal.capture())
        XCTAssertEqual(try String(contentsOfFile: knownHosts, encoding: .utf8), before, "y alone forgets nothing")
        XCTAssertEqual(try SSHOracle.check(name: host.address, port: host.port, knownHosts: knownHosts).verdict, .changed)

        terminal.send("x")
        XCTAssertTrue(terminal.waitFor { $0.contains("IS CHANGED") }.0, terminal.capture())
        terminal.type(host.endpoints[0].label)
        terminal.send("Enter")
        XCTAssertTrue(terminal.waitFor { $0.contains("Forgot") }.0, terminal.capture())
        XCTAssertEqual(try SSHOracle.check(name: host.address, port: host.port, knownHosts: knownHosts).verdict, .unknown)
        let audit = try String(contentsOfFile: scratch + "/audit.jsonl", encoding: .utf8)
        XCTAssertTrue(audit.contains("\"action\":\"forget-changed\""), audit)
        XCTAssertTrue(audit.contains(host.key(ofType: "ssh-ed25519")!.sha256Fingerprint), "what it presented: \(audit)")
    }

    func testABatchThatLeavesOutTheHighlightedHostSaysSoFirstAtEightyColumns() throws {
        let terminal = try open(width: 80, height: 24)
        let marked = fleet!.hosts[2], highlighted = fleet!.hosts[1]
        func show(_ host: TestFleet.Host) {
            terminal.send("/")
            for _ in 0..<10 { terminal.send("BSpace") }
            terminal.type(":\(host.port)")
            terminal.send("Enter")
            let others = fleet!.hosts.filter { $0.port != host.port }
            XCTAssertTrue(terminal.waitFor { screen in
                self.row(screen, port: host.port) != nil && others.allSatisfy { self.row(screen, port: $0.port) == nil }
            }.0, terminal.capture())
        }
        show(marked)
        terminal.send("Space")
        XCTAssertTrue(terminal.waitFor { $0.contains("* 1 marked") }.0, terminal.capture())
        show(highlighted)
        XCTAssertTrue(terminal.waitFor { $0.contains("* 1 marked (1 hidden by the filter)") }.0, terminal.capture())
        XCTAssertTrue(terminal.waitFor { $0.contains(" t  trust ") && $0.contains(" c  connect ") && $0.contains(" Space  mark ") }.0,
                      "at 80 columns the footer keeps the keys that act: \(terminal.capture())")
        terminal.send("t")
        let (asked, dialog) = terminal.waitFor { $0.contains("y saves") }
        XCTAssertTrue(asked, dialog)
        let first = dialog.split(separator: "\n", omittingEmptySubsequences: false)[2]
        XCTAssertTrue(first.contains("NOT the highlighted host \(highlighted.endpoints[0].label)"), dialog)
        terminal.send("y")
        XCTAssertTrue(terminal.waitFor { $0.contains("Trusted") }.0, terminal.capture())
        XCTAssertEqual(try SSHOracle.check(name: marked.address, port: marked.port, knownHosts: knownHosts).verdict, .trusted)
        XCTAssertEqual(try SSHOracle.check(name: highlighted.address, port: highlighted.port, knownHosts: knownHosts).verdict, .trusted)
    }

    func testTrustIntoAMistypedKnownHostsFileIsRefusedUnlessCreateIsGiven() throws {
        let typo = scratch + "/known_host"
        for create in [false, true] {
            let terminal = try DashboardTmux(arguments: ["--inventory", fleet!.inventoryPath, "--known-hosts", typo,
                                                         "--audit-log", scratch + "/audit.jsonl"] + (create ? ["--create"] : []))
            self.terminal = terminal
            XCTAssertTrue(terminal.waitFor { !$0.contains("scanning") && $0.contains(" new ") && !$0.contains("discovery") }.0, terminal.capture())
            select(terminal, host: 2)
            terminal.send("t")
            if !create {
                XCTAssertTrue(terminal.waitFor { $0.contains("did not exist when the dashboard opened") }.0, terminal.capture())
                terminal.send("y")
                // Any key clears the notice: once it is gone, the y was read and handled.
                XCTAssertTrue(terminal.waitFor { !$0.contains("did not exist when the dashboard opened") }.0, terminal.capture())
                XCTAssertFalse(FileManager.default.fileExists(atPath: typo), "t, y made the mistyped file")
            } else {
                XCTAssertTrue(terminal.waitFor { $0.contains("y saves") }.0, terminal.capture())
                terminal.send("y")
                XCTAssertTrue(terminal.waitFor { $0.contains("Trusted") }.0, terminal.capture())
                let host = fleet!.hosts[2]
                XCTAssertEqual(try SSHOracle.check(name: host.address, port: host.port, knownHosts: typo).verdict, .trusted)
            }
            terminal.stop()
        }
    }

    private func row(_ screen: String, port: Int) -> Substring? {
        screen.split(separator: "\n").first { $0.contains(":\(port) ") }
    }

    func testPinWritesThePresentedFingerprintsAndThePinThenMatches() throws {
        let terminal = try open()
        let host = fleet!.hosts[1]
        select(terminal, host: 1)
        terminal.send("p")
        XCTAssertTrue(terminal.waitFor { $0.contains("Pin the presented keys of 1 host") }.0, terminal.capture())
        terminal.send("y")
        let (pinned, screen) = terminal.waitFor { $0.contains("Pinned the keys") && $0.contains(" match ") }
        XCTAssertTrue(pinned, screen)
        let pins = try String(contentsOfFile: scratch + "/pins", encoding: .utf8)
        XCTAssertTrue(pins.hasPrefix(host.knownHostsName + " "), pins)
        for key in host.publicKeys { XCTAssertTrue(pins.contains(key.sha256Fingerprint), pins) }
    }
}
