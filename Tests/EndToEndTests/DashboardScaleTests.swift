import FleetTrustTestFleet
import Foundation
import XCTest

/// The dashboard with a 10,000-host inventory: it opens, stays responsive while discovery runs,
/// and reports what it costs (printed as `DASHBOARD-SCALE` lines for the closing note).
final class DashboardScaleTests: XCTestCase {
    private var fleet: TestFleet?
    private var terminal: DashboardTmux?
    private var scratch = ""

    override func tearDown() {
        terminal?.stop()
        fleet?.stop()
        try? FileManager.default.removeItem(atPath: scratch)
    }

    func testTenThousandHostsOpenScrollAndQuitCleanly() throws {
        let fleet = try TestFleet.start(hosts: 2)
        self.fleet = fleet
        scratch = NSTemporaryDirectory() + "dashboard-scale-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        var lines = fleet.hosts.map { $0.endpoints[0].label }
        for n in lines.count..<10_000 { lines.append("127.0.\(1 + n / 250).\(1 + n % 250):\(1 + n % 3)") }
        let inventory = scratch + "/inventory.txt"
        try (lines.joined(separator: "\n") + "\n").write(toFile: inventory, atomically: true, encoding: .utf8)

        let started = Date()
        let terminal = try DashboardTmux(arguments: ["--inventory", inventory, "--known-hosts", scratch + "/known_hosts",
                                                     "--audit-log", scratch + "/audit.jsonl", "--timeout", "2"])
        self.terminal = terminal
        let (opened, first) = terminal.waitFor(timeout: 60) { $0.contains("(10000 hosts)") && $0.contains(lines[0]) }
        let firstScreen = Date().timeIntervalSince(started)
        XCTAssertTrue(opened, first)

        var pressTimes: [TimeInterval] = []
        for (key, expectation) in [("G", lines[9_999] + " "), ("g", lines[0] + " "), ("PageDown", lines[41] + " "), ("G", lines[9_999] + " ")] {
            let pressed = Date()
            terminal.send(key)
            let (moved, screen) = terminal.waitFor(timeout: 30) { $0.contains(expectation) }
            XCTAssertTrue(moved, "\(key): \(screen)")
            pressTimes.append(Date().timeIntervalSince(pressed))
        }
        let (done, final) = terminal.waitFor(timeout: 60) { !$0.contains("discovery ") }
        let discovery = done ? "done after \(Int(Date().timeIntervalSince(started))) s"
            : "unfinished after 60 s: " + (final.split(separator: "\n").dropFirst().first.map(String.init) ?? "")
        let rss = terminal.childPIDs.compactMap { terminal.residentKilobytes(of: $0) }.max() ?? 0
        print("DASHBOARD-SCALE first screen \(Int(firstScreen * 1000)) ms; key to screen (incl. tmux polling) "
              + pressTimes.map { "\(Int($0 * 1000)) ms" }.joined(separator: ", ")
              + "; discovery \(discovery); resident memory \(rss / 1024) MiB")
        terminal.send("q")
        XCTAssertTrue(terminal.waitFor { $0.contains(DashboardTmux.exitMarker + "0") }.0)
    }
}
