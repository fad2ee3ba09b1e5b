import Foundation
import Subprocess
#if canImport(Glibc)
import Glibc
#endif

/// What the detached `Subprocess.run` task of a `ChildProcess` tells the threads that wait on it:
/// the PID (and our pidfd) once the child is started, then that the run has returned (the child
/// exited and was reaped) and how the child ended.
final class ChildRun: @unchecked Sendable {
    private let condition = NSCondition()
    private var pid: pid_t?
    private var pidfd: Int32 = -1
    private var startError: (any Error)?
    private var ended = false
    private var ending: ChildProcess.Ending?

    func started(_ pid: pid_t, pidfd: Int32) {
        update {
            self.pid = pid
            self.pidfd = pidfd
        }
    }

    func finished(_ termination: TerminationStatus) {
        update {
            ended = true
            switch termination {
            case .exited(let code): ending = .exited(code)
            case .signaled(let signal): ending = .signaled(signal)
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

    func waitForStart() throws -> (pid: pid_t, pidfd: Int32) {
        condition.lock()
        defer { condition.unlock() }
        while pid == nil && startError == nil { condition.wait() }
        if let pid { return (pid, pidfd) }
        throw startError!
    }

    var hasEnded: Bool {
        condition.lock()
        defer { condition.unlock() }
        return ended
    }

    var exitEnding: ChildProcess.Ending? {
        condition.lock()
        defer { condition.unlock() }
        return ending
    }

    /// Whether the run returned before `deadline` (nil: waits for it however long it takes;
    /// Foundation's `NSCondition.wait(until: .distantFuture)` traps on Linux).
    @discardableResult
    func waitForEnd(until deadline: ContinuousClock.Instant?) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !ended {
            if let deadline {
                let left = deadline - .now
                guard left > .zero else { break }
                let (seconds, attoseconds) = left.components
                _ = condition.wait(until: Date(timeIntervalSinceNow: Double(seconds) + Double(attoseconds) / 1e18))
            } else {
                condition.wait()
            }
        }
        return ended
    }
}

/// Runs the jobs of `ChildProcess`'s tasks on Dispatch's own threads, so that a caller blocked in
/// `ChildProcess.init` on a cooperative thread cannot starve the task it waits for.
final class ChildTaskExecutor: TaskExecutor, @unchecked Sendable {
    static let shared = ChildTaskExecutor()
    private let queue = DispatchQueue(label: "fleettrust.child-process", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
