import Foundation
import XCTest
import FleetTrustTestFleet

/// `SpawnedProcess` on swift-subprocess keeps what the test daemons rely on: `terminate()` leaves
/// no process behind (the child is reaped, its PID gone), a child that exits by itself is seen as
/// not running, and the child starts with default signals, /dev/null for stdin and stdout, stderr
/// appended to its file and the runner's environment.
final class SpawnedProcessTests: XCTestCase {
    func testTerminateStopsTheChildAndReapsIt() throws {
        let child = try SpawnedProcess("/bin/sleep", ["600"])
        XCTAssertTrue(child.isRunning)
        XCTAssertEqual(kill(child.pid, 0), 0)
        child.terminate()
        XCTAssertFalse(child.isRunning)
        XCTAssertEqual(child.exitStatus, SIGTERM)
        XCTAssertEqual(kill(child.pid, 0), -1, "no process, not even a zombie, keeps the PID")
        XCTAssertEqual(errno, ESRCH)
    }

    func testChildIgnoringSIGTERMIsKilledAfterTheGrace() throws {
        let child = try SpawnedProcess("/bin/sh", ["-c", "trap '' TERM; exec sleep 600"])
        // Until the shell has set the trap, SIGTERM would end it at once; its ignored SIGTERM shows here.
        XCTAssertTrue(waitUntil { Self.signalMask("SigIgn", of: child.pid).map { $0 & (1 << (SIGTERM - 1)) != 0 } ?? false })
        let started = Date()
        child.terminate(grace: 0.3)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.3)
        XCTAssertEqual(child.exitStatus, SIGKILL)
        XCTAssertEqual(kill(child.pid, 0), -1)
        XCTAssertEqual(errno, ESRCH)
    }

    func testChildThatExitsByItselfIsSeenAsNotRunning() throws {
        let child = try SpawnedProcess("/bin/sh", ["-c", "exit 7"])
        XCTAssertTrue(waitUntil { !child.isRunning })
        XCTAssertEqual(child.exitStatus, 7)
        XCTAssertEqual(kill(child.pid, 0), -1)
        XCTAssertEqual(errno, ESRCH)
        child.terminate()
        XCTAssertEqual(child.exitStatus, 7, "terminate() after the end signals nothing")
    }

    func testAProgramThatCannotStartThrows() {
        XCTAssertThrowsError(try SpawnedProcess("/nonexistent/fleettrust-test-program", [])) { error in
            XCTAssertTrue("\(error)".contains("cannot start /nonexistent/fleettrust-test-program"), "\(error)")
        }
    }

    func testChildStartsWithDefaultSignalsNullStdioAppendedStderrAndTheInheritedEnvironment() throws {
        let log = NSTemporaryDirectory() + "ft-spawned-\(getpid())-\(UUID().uuidString.prefix(8)).log"
        defer { unlink(log) }
        try "earlier\n".write(toFile: log, atomically: true, encoding: .utf8)
        setenv("FT_SPAWNED_PROBE", "inherited", 1)
        defer { unsetenv("FT_SPAWNED_PROBE") }
        // An ignored signal is inherited across exec unless the spawn resets it: the child must not inherit this.
        let oldPipe = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, oldPipe) }
        let child = try SpawnedProcess("/bin/sleep", ["600"], stderrPath: log)
        defer { child.terminate() }
        let proc = "/proc/\(child.pid)"
        XCTAssertTrue(waitUntil { (try? String(contentsOfFile: proc + "/comm", encoding: .utf8)) == "sleep\n" })
        // exec names the process before it lays out the new environment: until then /proc shows none.
        XCTAssertTrue(waitUntil { (try? String(contentsOfFile: proc + "/environ", encoding: .utf8)).map { !$0.isEmpty } ?? false })
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: proc + "/fd").compactMap { Int($0) }.sorted()
        XCTAssertEqual(descriptors, [0, 1, 2], "no descriptor of the runner but stdio")
        let targets = try (0...2).map { try FileManager.default.destinationOfSymbolicLink(atPath: proc + "/fd/\($0)") }
        XCTAssertEqual(targets, ["/dev/null", "/dev/null", log])
        let flags = try String(contentsOfFile: proc + "/fdinfo/2", encoding: .utf8).split(separator: "\n")
            .first { $0.hasPrefix("flags:") }.flatMap { Int32($0.split(separator: "\t").last ?? "", radix: 8) }
        XCTAssertNotEqual(try XCTUnwrap(flags) & O_APPEND, 0, "stderr is appended to")
        XCTAssertEqual(try String(contentsOfFile: log, encoding: .utf8), "earlier\n", "and not truncated")
        let environment = try String(contentsOfFile: proc + "/environ", encoding: .utf8).split(separator: "\0")
        XCTAssertTrue(environment.contains("FT_SPAWNED_PROBE=inherited"))
        // Signals 1-31 only: glibc keeps 32 and 33 (its own) out of every signal set it resets.
        XCTAssertEqual(Self.signalMask("SigIgn", of: child.pid).map { $0 & 0x7fff_ffff }, 0, "no signal ignored")
        XCTAssertEqual(Self.signalMask("SigBlk", of: child.pid).map { $0 & 0x7fff_ffff }, 0, "no signal blocked")
    }

    /// A signal mask (`SigIgn`, `SigBlk`) of a process, as `/proc/PID/status` shows it.
    private static func signalMask(_ name: String, of pid: pid_t) -> UInt64? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return nil }
        return UInt64(line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces), radix: 16)
    }

    private func waitUntil(timeout: TimeInterval = 10, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            if Date() > deadline { return false }
            usleep(10_000)
        }
        return true
    }
}
