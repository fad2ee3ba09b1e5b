import Foundation
import XCTest

/// `DashboardTmux.run` (on `Tool.run`) and the daemon a client forks, as `tmux new-session` forks
/// the tmux server: the daemon gets no pipe of ours, and a reader is not held up by one that has it.
final class DashboardTmuxRunTests: XCTestCase {
    func testADaemonForkedByAClientNotReadFromInheritsNoPipe() throws {
        let pidFile = NSTemporaryDirectory() + "ft-tmux-run-\(getpid())-\(UUID().uuidString.prefix(8))"
        defer { unlink(pidFile) }
        try DashboardTmux.run(["/bin/sh", "-c", "sleep 60 & echo $! > \"$0\"", pidFile], readingOutput: false)
        let daemon = try XCTUnwrap(pid_t(String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        defer { kill(daemon, SIGKILL) }
        XCTAssertTrue(Self.becomesSleep(daemon))
        for descriptor in 0...2 {
            XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(daemon)/fd/\(descriptor)"), "/dev/null")
        }
    }

    func testReadingAClientReturnsWhenItExitsThoughItsDaemonHoldsTheOutputPipe() throws {
        let started = Date()
        let output = try DashboardTmux.run(["/bin/sh", "-c", "sleep 60 & echo $!"], readingOutput: true)
        let daemon = try XCTUnwrap(pid_t(output.trimmingCharacters(in: .whitespacesAndNewlines)), output)
        defer { kill(daemon, SIGKILL) }
        XCTAssertTrue(Self.becomesSleep(daemon), "the daemon still runs, holding the pipe")
        XCTAssertTrue(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(daemon)/fd/1").hasPrefix("pipe:"))
        XCTAssertLessThan(Date().timeIntervalSince(started), 30, "the read ended with the client, not with the daemon")
    }

    /// Whether the forked shell has exec'd `sleep` (it is `sh` until then).
    private static func becomesSleep(_ pid: pid_t) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while DashboardTmux.command(of: pid) != "sleep" {
            if Date() > deadline { return false }
            usleep(10_000)
        }
        return true
    }
}
