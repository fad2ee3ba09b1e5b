import FleetTrustTestFleet
import Foundation
import XCTest

/// `scan`'s table fits the terminal it is printed on: COLUMNS or the tty's width, full rows with
/// `--wide` or in a pipe, colour only on a terminal.
final class ScanTableWidthTests: XCTestCase {
    private var scratch = ""
    private var inventory: String { scratch + "/refusing.txt" }

    override func setUpWithError() throws {
        scratch = NSTemporaryDirectory() + "scan-table-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        try "127.0.0.1:1\n127.0.0.2:1\ndeploy@127.0.0.3:1\n".write(toFile: inventory, atomically: true, encoding: .utf8)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: scratch) }

    private func scan(_ extra: [String] = [], columns: String?) throws -> ProgramRun {
        var environment = ProcessInfo.processInfo.environment
        environment["COLUMNS"] = columns
        return try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--inventory", inventory, "--known-hosts", scratch + "/kh",
                                                             "--no-history", "--timeout", "3"] + extra, environment: environment)
    }

    private func hostLines(_ run: ProgramRun) -> [Substring] {
        run.stdoutText.split(separator: "\n", omittingEmptySubsequences: false).prefix { !$0.isEmpty }
    }

    func testColumnsCutsEveryRowToTheWidthAndKeepsStatusNameAndReason() throws {
        let run = try scan(columns: "60")
        XCTAssertEqual(run.status, 1, run.stderrText)
        let lines = hostLines(run)
        XCTAssertEqual(lines.count, 4, run.stdoutText)
        for line in run.stdoutText.split(separator: "\n") { XCTAssertLessThanOrEqual(line.count, 60, "\(line)") }
        XCTAssertTrue(lines[0].hasPrefix("STATUS") && lines[0].hasSuffix("REASON"), "\(lines[0])")
        XCTAssertTrue(lines[1].hasPrefix("unreachable  127.0.0.1:1") && lines[1].contains("connect failed"), "\(lines[1])")
        XCTAssertFalse(run.stdoutText.contains("\u{1B}["), "colour in a pipe")
    }

    func testWideAndAPipeWithoutColumnsPrintFullRows() throws {
        for run in [try scan(["--wide"], columns: "60"), try scan(columns: nil)] {
            let lines = hostLines(run)
            XCTAssertTrue(lines[0].contains("ENDPOINT") && lines[0].contains("POLICY"), "\(lines[0])")
            XCTAssertTrue(lines[1].hasSuffix("connect failed: connection refused"), "\(lines[1])")
        }
    }

    func testOnATerminalTheTableFitsItsWidthInColour() throws {
        let command = ([BuiltProducts.fleettrust, "scan", "--inventory", inventory, "--known-hosts", scratch + "/kh",
                        "--no-history", "--timeout", "3"]).map(DashboardTmux.quote).joined(separator: " ")
        let terminal = try DashboardTmux(script: "env -u COLUMNS -u NO_COLOR \(DashboardTmux.environment()) \(command); echo SCAN-EXIT=$?; exec sleep 600",
                                         width: 72, height: 20)
        defer { terminal.stop() }
        let (done, screen) = terminal.waitFor(timeout: 30) { $0.contains("SCAN-EXIT=") }
        XCTAssertTrue(done, screen)
        let rows = screen.split(separator: "\n").filter { $0.hasPrefix("unreachable") }
        XCTAssertEqual(rows.count, 3, screen)
        XCTAssertTrue(rows.allSatisfy { $0.count <= 72 && $0.hasSuffix("…") || !$0.contains("ENDPOINT") }, screen)
        let coloured = terminal.captureWithAttributes()
        XCTAssertTrue(coloured.contains("\u{1B}[33munreachable") || coloured.contains("\u{1B}[33m") , "no colour on a terminal: \(coloured)")
    }
}
