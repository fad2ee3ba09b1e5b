import Foundation
import Synchronization

/// Up to `limit` dedicated OS threads that run blocking jobs in order of submission.
///
/// libssh blocks; on Swift's cooperative pool only as many handshakes as cores (2 here) would
/// run at once. Threads are started on demand and exit when the queue runs dry, so an idle
/// pool holds no threads.
///
/// Each job is told when it became due: when it was submitted, or when a thread came free for
/// it if it had to queue. A thread the OS is slow to run (on a busy machine a new thread may wait
/// hundreds of milliseconds for a core) then does not stretch the job's timeout.
final class WorkerThreads: Sendable {
    typealias Job = @Sendable (_ due: ContinuousClock.Instant) -> Void

    private struct Queued {
        var job: Job
        var submitted: ContinuousClock.Instant
    }

    private struct State {
        var jobs: [Queued] = []
        var head = 0
        var running = 0
    }

    let limit: Int
    private let state = Mutex(State())

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    func submit(_ job: @escaping Job) {
        let now = ContinuousClock.now
        let startThread = state.withLock { state in
            state.jobs.append(Queued(job: job, submitted: now))
            guard state.running < limit else { return false }
            state.running += 1
            return true
        }
        if startThread { spawn(at: now) }
    }

    private func spawn(at spawned: ContinuousClock.Instant) {
        let thread = Thread { [self] in
            WorkerThreads.nameCurrentThread()
            var free = spawned
            while let queued = nextJob() {
                queued.job(max(queued.submitted, free))
                free = ContinuousClock.now
            }
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Names the calling thread `fleettrust-ssh` for `top -H` and /proc/PID/task/*/comm (at most
    /// 15 bytes, the kernel's limit). Written through /proc/thread-self: Foundation's
    /// `Thread.name` reaches the kernel only when the new thread runs after `start()` has
    /// recorded it, which a busy machine does not always do.
    private static func nameCurrentThread() {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = "fleettrust-ssh".withCString { write(fd, $0, strlen($0)) }
        close(fd)
    }

    private func nextJob() -> Queued? {
        state.withLock { state in
            guard state.head < state.jobs.count else {
                state.jobs.removeAll(keepingCapacity: false)
                state.head = 0
                state.running -= 1
                return nil
            }
            let job = state.jobs[state.head]
            state.head += 1
            if state.head > 1024 && state.head * 2 > state.jobs.count {
                state.jobs.removeFirst(state.head)
                state.head = 0
            }
            return job
        }
    }
}
