import FleetTrustCore
import FleetTrustTestFleet
import Foundation
import XCTest

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

    private func open(_ extra: [String] = []) throws -> DashboardTmux {
        FileManager.default.createFile(atPath: scratch + "/pins", contents: Data())
        let terminal = try DashboardTmux(arguments: ["--inventory", fleet!.inventoryPath, "--known-hosts", knownHosts,
                                                     "--audit-log", scratch + "/audit.jsonl", "--pins", scratch + "/pins"] + extra)
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
        XCTAssertTrue(audit.contains("oldEntries"), audit)
    }

    func testARevokedHostCannotBeTrustedAndTheDashboardSaysWhy() throws {
        let terminal = try open()
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
        XCTAssertTrue(transcript.contains("-o StrictHostKeyChecking=yes -o UserKnownHostsFile=\(knownHosts)"), transcript)
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
