import FleetTrustTestFleet
import Foundation
import XCTest

/// On a terminal, scan's progress line says what it is still waiting for, and for how long.
final class ScanProgressTests: XCTestCase {
    func testTheProgressLineNamesTheHostsStillPendingAndTheTimeSpent() throws {
        let port = 46_000 + Int(getpid() % 900)
        let silent = try (1...5).map { try SilentListener(address: "127.0.3.\($0)", port: port) }
        defer { silent.forEach { $0.close() } }
        let scratch = NSTemporaryDirectory() + "scan-progress-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        try (["127.0.0.1:1"] + silent.map { "\($0.address):\(port)" }).joined(separator: "\n")
            .write(toFile: scratch + "/inventory", atomically: true, encoding: .utf8)
        let command = [BuiltProducts.fleettrust, "scan", "--inventory", scratch + "/inventory", "--known-hosts", scratch + "/kh",
                       "--no-history", "--timeout", "6"].map(DashboardTmux.quote).joined(separator: " ")
        let terminal = try DashboardTmux(script: "env \(DashboardTmux.environment()) \(command); echo SCAN-EXIT=$?; exec sleep 600",
                                         width: 160, height: 20)
        defer { terminal.stop() }
        // The silent ports accepted the connection and never sent an identification: stage banner.
        let (waiting, screen) = terminal.waitFor(timeout: 5) {
            $0.contains("waiting for 127.0.3.1:\(port) (banner), 127.0.3.2:\(port) (banner), 127.0.3.3:\(port) (banner) and 2 more")
        }
        XCTAssertTrue(waiting, screen)
        XCTAssertTrue(screen.contains("fleettrust: scanned 1/6, "), screen)
        let (later, _) = terminal.waitFor(timeout: 5) { $0.range(of: #"scanned 1/6, [2-9] s"#, options: .regularExpression) != nil }
        XCTAssertTrue(later, "the line is redrawn while nothing finishes")
        let (done, final) = terminal.waitFor(timeout: 20) { $0.contains("SCAN-EXIT=") }
        XCTAssertTrue(done, final)
        XCTAssertFalse(final.contains("waiting for"), "the progress line is cleared at the end: \(final)")
    }
}
