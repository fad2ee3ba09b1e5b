import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A long-running child started with `posix_spawn` and reaped by its PID.
///
/// Foundation's `Process` reaps children from one monitoring thread that blocks in
/// `wait4` on a long-lived child, which stalls every other `Process` in the same program;
/// daemons like sshd are therefore spawned and reaped here directly.
///
/// swift-subprocess (used for inventory scripts and `ssh -G`) is not used here either: its `run`
/// ties the child's life to one `async` call (the child is awaited, and torn down, before `run`
/// returns), while a test fleet's `sshd` must outlive the test method that started it and be
/// stopped later, by its PID, from synchronous `tearDown` code.
public final class SpawnedProcess: @unchecked Sendable {
    public let pid: pid_t
    private let lock = NSLock()
    private var exitStatus: Int32?

    /// Starts `path` with `arguments`; stdin and stdout go to /dev/null, stderr to `stderrPath`.
    public init(_ path: String, _ arguments: [String], stderrPath: String? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o644)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, path, &actions, &attributes, argv, environ)
        guard rc == 0 else { throw TestFleetError.toolFailed("posix_spawn \(path): \(String(cString: strerror(rc)))") }
        pid = child
    }

    /// Whether the child is still running (reaps it if it has exited).
    public var isRunning: Bool {
        lock.lock()
        defer { lock.unlock() }
        if exitStatus != nil { return false }
        var status: Int32 = 0
        let r = waitpid(pid, &status, WNOHANG)
        if r == pid || r < 0 {
            exitStatus = status
            return false
        }
        return true
    }

    /// SIGTERM, then SIGKILL after `grace` seconds; returns once the child is reaped.
    public func terminate(grace: TimeInterval = 5) {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        let deadline = Date().addingTimeInterval(grace)
        while isRunning {
            if Date() > deadline {
                kill(pid, SIGKILL)
                lock.lock()
                var status: Int32 = 0
                waitpid(pid, &status, 0)
                exitStatus = status
                lock.unlock()
                return
            }
            usleep(2_000)
        }
    }

    deinit { terminate() }
}
