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

/// A child process started from synchronous code and stopped later by that code: the route
/// children of a probe (`ssh` control masters, `ssh -W` channels, ProxyCommands) and the test
/// fleet's daemons (`SpawnedProcess`).
///
/// swift-subprocess starts and reaps it: a detached task runs `Subprocess.run`, whose body hands
/// the PID (and a duplicate of the child's pidfd) back to `init` and returns at once; `run` then
/// waits for the child to exit (watching its pidfd, blocking no thread) and reaps it. This type
/// never calls `waitpid`, since two reapers of one child race. The task runs on Dispatch threads
/// of its own (`ChildTaskExecutor`), not on Swift's cooperative pool, because `init` blocks its
/// caller until the child is started and the caller may be a cooperative thread.
///
/// One step of `run` escapes that executor: as `run` ends it awaits an unstructured `Task` of its
/// own (its cancellation watch), which needs a cooperative thread for a moment. So the end of the
/// child is seen in two ways: `hasExited` polls our own pidfd (readable once the child has exited,
/// whoever reaps it, and needing no thread of anyone's), while `ending` and `hasEnded` answer
/// only once `run` has returned with the status. `stop` waits on the pidfd, then for the reap for
/// at most `reapWait`, so a caller on a starved cooperative pool is delayed, never deadlocked
/// (with `reapWait: nil`, as `SpawnedProcess` asks, it waits for the reap however long it takes).
///
/// What the child gets: `standardIO` (or /dev/null) as stdin and stdout, the parent keeping its
/// own copy; `standardError` as stderr (closed here once the child has it); every signal at its
/// default disposition and none blocked; no other descriptor; a process group of its own when
/// `ownGroup` (then signals go to the whole group); this process's environment unless
/// `environment` is given.
public final class ChildProcess: @unchecked Sendable {
    /// How a child ended.
    public enum Ending: Sendable, Equatable {
        case exited(Int32)
        case signaled(Int32)
    }

    public let pid: pid_t
    /// Whether the child leads a process group of its own, signalled as a whole.
    public let ownGroup: Bool
    private let run: ChildRun
    /// Our duplicate of the child's pidfd (-1 on a kernel without pidfds): readable once it exits.
    private let pidfd: Int32

    /// Starts `path` with `arguments`; throws when it cannot be started. `standardError` is
    /// closed in every case.
    public init(_ path: String, _ arguments: [String], standardIO: Int32? = nil, standardError: Int32,
                ownGroup: Bool, environment: [String: String]? = nil) throws(ChildProcessError) {
        var options = PlatformOptions()
        if ownGroup { options.processGroupID = 0 }
        let configuration = Configuration(executable: .path(FilePath(path)), arguments: Arguments(arguments),
                                          environment: environment.map { vars in
                                              // Each entry goes to strdup(): it must end in NUL.
                                              .custom(vars.map { Array("\($0.key)=\($0.value)\0".utf8) })
                                          } ?? .inherit,
                                          platformOptions: options)
        let error = FileDescriptor(rawValue: standardError)
        let run = ChildRun()
        if let standardIO {
            let stdio = FileDescriptor(rawValue: standardIO)
            Self.start(configuration, input: .fileDescriptor(stdio, closeAfterSpawningProcess: false),
                       output: .fileDescriptor(stdio, closeAfterSpawningProcess: false), error: error, run: run)
        } else {
            Self.start(configuration, input: .none, output: .discarded, error: error, run: run)
        }
        let started = Result(catching: { try run.waitForStart() })
        close(standardError)
        switch started {
        case .success(let (pid, pidfd)):
            self.pid = pid
            self.pidfd = pidfd
        case .failure(let failure):
            throw ChildProcessError(path: path, reason: "\(failure)")
        }
        self.ownGroup = ownGroup
        self.run = run
    }

    private static func start<Input: InputProtocol, Output: OutputProtocol>(
        _ configuration: Configuration, input: Input, output: Output, error: FileDescriptor, run: ChildRun
    ) {
        Task.detached(executorPreference: ChildTaskExecutor.shared) {
            do {
                let result = try await Subprocess.run(configuration, input: input, output: output,
                                                      error: .fileDescriptor(error, closeAfterSpawningProcess: false)) { execution in
                    let identifier = execution.processIdentifier
                    run.started(identifier.value, pidfd: identifier.processDescriptor < 0
                        ? -1 : fcntl(identifier.processDescriptor, F_DUPFD_CLOEXEC, 0))
                }
                run.finished(result.terminationStatus)
            } catch {
                run.failed(error)
            }
        }
    }

    /// Whether the child has exited (it may not be reaped yet); never blocks.
    public var hasExited: Bool { waitForExit(until: .now) }

    /// Whether `run` has returned: the child exited and was reaped.
    public var hasEnded: Bool { run.hasEnded }

    /// How the child ended, once it is reaped; nil before.
    public var ending: Ending? { run.exitEnding }

    /// Sends `signal` to the child (its whole group when it leads one) unless it has exited.
    /// The PID names the child until it is reaped, and the pidfd says it has not exited, so it is
    /// not reaped; only in the instant between that check and `kill` could the child exit, be
    /// reaped and its PID be handed out again (PIDs rise up to `pid_max` before they wrap).
    @discardableResult
    public func signal(_ signal: Int32) -> Bool {
        guard !hasExited, !run.hasEnded else { return false }
        kill(ownGroup ? -pid : pid, signal)
        return true
    }

    /// SIGKILL to what remains of the child's group once the child itself is gone (what it
    /// started: the `ssh` of a ProxyCommand pipeline). The group's ID cannot be handed out again
    /// while any member lives; with none left the kill finds nobody.
    public func killGroupRemains() {
        if ownGroup { kill(-pid, SIGKILL) }
    }

    /// Whether the child exited before `deadline` (nil: waits however long it takes).
    @discardableResult
    public func waitForExit(until deadline: ContinuousClock.Instant?) -> Bool {
        guard pidfd >= 0 else { return run.waitForEnd(until: deadline) }
        var entry = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
        while true {
            let left = deadline.map { Int32(clamping: max(.zero, $0 - .now).millisecondsRoundedUp) } ?? -1
            let ready = poll(&entry, 1, left)
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR { return false }
            if ready == 0, let deadline, ContinuousClock.now >= deadline { return false }
        }
    }

    /// Whether `run` returned (the child reaped) before `deadline`; nil: however long it takes.
    @discardableResult
    public func waitForEnd(until deadline: ContinuousClock.Instant?) -> Bool {
        run.waitForEnd(until: deadline)
    }

    /// SIGTERM, then SIGKILL after `grace`; returns once the child has exited and, unless the
    /// cooperative pool is too busy to let `run` end within `reapWait` (nil: no bound), is reaped.
    public func stop(grace: Duration, reapWait: Duration? = .seconds(2)) {
        if signal(SIGTERM), !waitForExit(until: .now + grace) {
            signal(SIGKILL)
            waitForExit(until: nil)
        }
        killGroupRemains()
        waitForEnd(until: reapWait.map { .now + $0 })
    }

    deinit {
        if pidfd >= 0 { close(pidfd) }
    }
}

/// Why a child could not be started.
public struct ChildProcessError: Error, CustomStringConvertible, Sendable {
    public var path: String
    public var reason: String

    public var description: String { "cannot start \(path): \(reason)" }
}

extension Duration {
    /// Whole milliseconds, rounded up: a wait given this many never ends before the duration.
    fileprivate var millisecondsRoundedUp: Int64 {
        let (seconds, attoseconds) = components
        let unit: Int64 = 1_000_000_000_000_000
        return seconds * 1000 + (attoseconds + unit - 1) / unit
    }
}
