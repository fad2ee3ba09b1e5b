import Foundation
import Subprocess
#if canImport(System)
import System
#else
import SystemPackage
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A long-running child (a test `sshd`, `openssl s_server`, a fake key server) that outlives the
/// code that started it and is stopped later, by its PID, from synchronous code (`tearDown`, `stop()`).
///
/// The child is started and reaped by swift-subprocess: a detached task runs `Subprocess.run`,
/// whose body hands the child's PID back to `init` and returns at once; `run` then waits for the
/// child to exit (watching its pidfd, blocking no thread) and reaps it. This type never calls
/// `waitpid` itself, since two reapers of one child race; it learns that the child ended when that
/// `run` returns. The task runs on Dispatch threads of its own (`ChildTaskExecutor`), not on
/// Swift's cooperative pool, because `init` and `terminate` block their caller until the task has
/// got that far, and a caller may be a cooperative thread (an `async` test, a `deinit` there).
/// One step escapes that executor: as `run` ends, it awaits an unstructured `Task` of its own
/// (its cancellation watch), which inherits no executor preference and so needs a cooperative
/// thread for a moment. `terminate` on a cooperative thread is therefore fine while another one
/// is free, but many of them blocked in `terminate` at once could wait for each other.
///
/// What the child gets, from swift-subprocess: stdin and stdout on /dev/null, stderr appended to
/// `stderrPath` (or /dev/null); every signal at its default disposition and none blocked (so
/// `sshd` dies on SIGTERM even when the test runner ignores or blocks it); no descriptor but
/// those three (the runner's sockets stay out of it); this process's environment unless
/// `environment` is given.
public final class SpawnedProcess: @unchecked Sendable {
    public let pid: pid_t
    private let run: ChildRun

    /// Starts `path` with `arguments`; stdin and stdout go to /dev/null, stderr to `stderrPath`.
    /// `environment`, when given, replaces the inherited one.
    public init(_ path: String, _ arguments: [String], stderrPath: String? = nil,
                environment: [String: String]? = nil) throws {
        let errorFile: FileDescriptor
        do {
            errorFile = try FileDescriptor.open(FilePath(stderrPath ?? "/dev/null"), .writeOnly,
                                                options: [.create, .append, .closeOnExec], permissions: [.ownerReadWrite, .groupRead, .otherRead])
        } catch {
            throw TestFleetError.toolFailed("\(path): cannot open \(stderrPath ?? "/dev/null"): \(error)")
        }
        let configuration = Configuration(executable: .path(FilePath(path)), arguments: Arguments(arguments),
                                          environment: environment.map { vars in
                                              // Each entry goes to strdup(): it must end in NUL.
                                              .custom(vars.map { Array("\($0.key)=\($0.value)\0".utf8) })
                                          } ?? .inherit)
        let run = ChildRun()
        Task.detached(executorPreference: ChildTaskExecutor.shared) {
            do {
                let result = try await Subprocess.run(configuration, input: .none, output: .discarded,
                                                      error: .fileDescriptor(errorFile, closeAfterSpawningProcess: true)) { execution in
                    run.started(execution.processIdentifier.value)
                }
                run.finished(result.terminationStatus)
            } catch {
                run.failed(error)
            }
        }
        do {
            pid = try run.waitForStart()
        } catch {
            throw TestFleetError.toolFailed("cannot start \(path): \(error)")
        }
        self.run = run
    }

    /// Whether the child is still running: false once swift-subprocess has seen it exit and reaped it.
    public var isRunning: Bool { !run.hasEnded }

    /// How the child ended: its exit code, or the signal number when a signal ended it (as
    /// `ToolOutput.status`); nil while it runs.
    public var exitStatus: Int32? { run.exitStatus }

    /// SIGTERM, then SIGKILL after `grace` seconds; returns once the child is reaped.
    public func terminate(grace: TimeInterval = 5) {
        guard run.signal(pid, SIGTERM) else { return }
        if run.waitForEnd(until: Date().addingTimeInterval(grace)) { return }
        run.signal(pid, SIGKILL)
        run.waitForEnd(until: nil)
    }

    deinit { terminate() }
}

/// What the detached `Subprocess.run` task tells the threads that wait on it: the PID once the
/// child is started, then that the run has returned (the child exited and was reaped).
private final class ChildRun: @unchecked Sendable {
    private let condition = NSCondition()
    private var pid: pid_t?
    private var startError: (any Error)?
    private var ended = false
    private var status: Int32?

    func started(_ pid: pid_t) {
        update { self.pid = pid }
    }

    func finished(_ termination: TerminationStatus) {
        update {
            ended = true
            switch termination {
            case .exited(let code): status = code
            case .signaled(let signal): status = signal
            }
        }
    }

    /// The run threw: before its body ran, the spawn failed; after, the child is reaped all the same.
    func failed(_ error: any Error) {
        update {
            if pid == nil { startError = error } else { ended = true }
        }
    }

    private func update(_ change: () -> Void) {
        condition.lock()
        change()
        condition.broadcast()
        condition.unlock()
    }

    func waitForStart() throws -> pid_t {
        condition.lock()
        defer { condition.unlock() }
        while pid == nil && startError == nil { condition.wait() }
        if let pid { return pid }
        throw startError!
    }

    var hasEnded: Bool {
        condition.lock()
        defer { condition.unlock() }
        return ended
    }

    var exitStatus: Int32? {
        condition.lock()
        defer { condition.unlock() }
        return status
    }

    /// Sends `signal` to `pid` unless the run has returned. The PID names the child until
    /// swift-subprocess reaps it, just before `run` returns; only in the instant between that reap
    /// and `ended` could it name another process, and only if the kernel's PIDs, handed out in
    /// rising order up to `pid_max`, wrapped round in that instant.
    @discardableResult
    func signal(_ pid: pid_t, _ signal: Int32) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !ended else { return false }
        kill(pid, signal)
        return true
    }

    /// Whether the run returned before `deadline` (nil: waits for it however long it takes;
    /// Foundation's `NSCondition.wait(until: .distantFuture)` traps on Linux).
    @discardableResult
    func waitForEnd(until deadline: Date?) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !ended {
            if let deadline {
                if !condition.wait(until: deadline) { break }
            } else {
                condition.wait()
            }
        }
        return ended
    }
}

/// Runs the jobs of `SpawnedProcess`'s tasks on Dispatch's own threads, so that a caller blocked
/// in `init` or `terminate` on a cooperative thread cannot starve the task it waits for.
private final class ChildTaskExecutor: TaskExecutor, @unchecked Sendable {
    static let shared = ChildTaskExecutor()
    private let queue = DispatchQueue(label: "fleettrust.spawned-process", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
