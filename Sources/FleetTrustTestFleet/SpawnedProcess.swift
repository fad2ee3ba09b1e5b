import Foundation
import FleetTrustCore
#if canImport(Glibc)
import Glibc
#endif

/// A long-running child (a test `sshd`, `openssl s_server`, a fake key server) that outlives the
/// code that started it and is stopped later, by its PID, from synchronous code (`tearDown`, `stop()`).
///
/// A `ChildProcess` (FleetTrustCore), the runner fleettrust's routes use too: swift-subprocess
/// starts the child from a detached task on Dispatch threads of its own, hands the PID back to
/// `init`, waits for the child to exit (watching its pidfd, blocking no thread) and reaps it; this
/// type never calls `waitpid`. `terminate` returns once the child is reaped, which needs one
/// thread of Swift's cooperative pool for a moment (see `ChildProcess`): `terminate` on a
/// cooperative thread is therefore fine while another one is free, but many of them blocked in
/// `terminate` at once could wait for each other.
///
/// What the child gets: stdin and stdout on /dev/null, stderr appended to `stderrPath` (or
/// /dev/null); every signal at its default disposition and none blocked (so `sshd` dies on SIGTERM
/// even when the test runner ignores or blocks it); no descriptor but those three (the runner's
/// sockets stay out of it); this process's process group, and its environment unless
/// `environment` is given.
public final class SpawnedProcess: @unchecked Sendable {
    public let pid: pid_t
    private let process: ChildProcess

    /// Starts `path` with `arguments`; stdin and stdout go to /dev/null, stderr to `stderrPath`.
    /// `environment`, when given, replaces the inherited one.
    public init(_ path: String, _ arguments: [String], stderrPath: String? = nil,
                environment: [String: String]? = nil) throws {
        let errorPath = stderrPath ?? "/dev/null"
        let errorFile = open(errorPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard errorFile >= 0 else {
            throw TestFleetError.toolFailed("\(path): cannot open \(errorPath): \(String(cString: strerror(errno)))")
        }
        do {
            process = try ChildProcess(path, arguments, standardError: errorFile, ownGroup: false,
                                       environment: environment)
        } catch {
            throw TestFleetError.toolFailed("\(error)")
        }
        pid = process.pid
    }

    /// Whether the child is still running: false once swift-subprocess has seen it exit and reaped it.
    public var isRunning: Bool { !process.hasEnded }

    /// How the child ended: its exit code, or the signal number when a signal ended it (as
    /// `ToolOutput.status`); nil while it runs.
    public var exitStatus: Int32? {
        switch process.ending {
        case .exited(let code)?: code
        case .signaled(let signal)?: signal
        case nil: nil
        }
    }

    /// SIGTERM, then SIGKILL after `grace` seconds; returns once the child is reaped.
    public func terminate(grace: TimeInterval = 5) {
        process.stop(grace: .seconds(grace), reapWait: nil)
    }

    deinit { terminate() }
}
