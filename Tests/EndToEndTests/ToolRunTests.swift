import Foundation
import XCTest
import FleetTrustTestFleet

/// `Tool.run` on swift-subprocess keeps what its callers rely on: input, both streams, the exit
/// status (the signal number for a signal), a replaced environment, and an `async` variant that
/// many tasks can use at once from the cooperative pool.
final class ToolRunTests: XCTestCase {
    func testSynchronousRunPassesInputAndReturnsBothStreamsAndTheExitStatus() throws {
        let output = try Tool.run("/bin/sh", ["-c", "cat; echo problem >&2; exit 3"], input: "hello\n")
        XCTAssertEqual(output.status, 3)
        XCTAssertEqual(output.stdout, "hello\n")
        XCTAssertEqual(output.stderr, "problem\n")
        XCTAssertEqual(try Tool.run("/bin/sh", ["-c", "kill -TERM $$"]).status, SIGTERM)
    }

    func testGivenEnvironmentReplacesTheInheritedOne() throws {
        XCTAssertEqual(try Tool.run("/usr/bin/env", [], environment: ["FT_ONLY": "yes"]).stdout, "FT_ONLY=yes\n")
    }

    func testCheckThrowsWithTheToolsStandardError() {
        XCTAssertThrowsError(try Tool.check("/bin/sh", ["-c", "echo broken >&2; exit 1"])) { error in
            XCTAssertTrue("\(error)".contains("broken"), "\(error)")
        }
    }

    func testAsyncRunsFromManyTasksAtOnceAllFinish() async throws {
        let outputs = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<16 {
                group.addTask { try await Tool.run("/bin/sh", ["-c", "sleep 0.2; echo $0", String(index)]).stdout }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        XCTAssertEqual(outputs, Set((0..<16).map { "\($0)\n" }))
    }
}
