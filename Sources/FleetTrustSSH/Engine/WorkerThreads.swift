import CLinux
import Foundation

/// Up to `limit` dedicated OS threads that run blocking jobs in order of submission.
///
/// libssh blocks; on Swift's cooperative pool only as many handshakes as cores (2 here) would
/// run at once. Threads are started on demand; one whose queue runs dry waits `linger` for more
/// work before it exits, so an idle pool soon holds no threads, while a scan that keeps handing
/// out work (a host's second and third key types, the next host) reuses them: starting a thread
/// (clone, a fresh stack to fault in and unmap, a malloc arena) costs more CPU than a handshake's
/// bookkeeping.
///
/// Each job is told when it became due: when it was submitted, or when a thread came free for
/// it if it had to queue. A thread the OS is slow to run (on a busy machine a new thread may wait
/// hundreds of milliseconds for a core) then does not stretch the job's timeout.
final class WorkerThreads: @unchecked Sendable {
    typealias Job = @Sendable (_ due: ContinuousClock.Instant) -> Void

    private struct Queued {
        var job: Job
        var submitted: ContinuousClock.Instant
    }

    private struct State {
        var jobs: [Queued] = []
        var head = 0
        var running = 0
        /// Threads among `running` that wait for work.
        var idle = 0
    }

    let limit: Int
    /// How long a thread with nothing to do waits for a job before it exits.
    let linger: Duration
    /// Guards `state`; idle threads wait on it for jobs.
    private let condition = NSCondition()
    private var state = State()

    init(limit: Int, linger: Duration = .seconds(2)) {
        self.limit = max(1, limit)
        self.linger = linger
    }

    func submit(_ job: @escaping Job) {
        let now = ContinuousClock.now
        condition.lock()
        state.jobs.append(Queued(job: job, submitted: now))
        let waiting = state.jobs.count - state.head
        let startThread = waiting > state.idle && state.running < limit
        if startThread { state.running += 1 }
        if state.idle > 0 { condition.signal() }
        condition.unlock()
        if startThread { spawn(at: now) }
    }

    private func spawn(at spawned: ContinuousClock.Instant) {
        let thread = Thread { [self] in
            nameCurrentThread("fleettrust-ssh")
            var free = spawned
            while let queued = nextJob() {
                queued.job(max(queued.submitted, free))
                free = ContinuousClock.now
            }
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    private func nextJob() -> Queued? {
        condition.lock()
        defer { condition.unlock() }
        let giveUp = Date(timeIntervalSinceNow: Double(linger.components.seconds) + Double(linger.components.attoseconds) / 1e18)
        while state.head >= state.jobs.count {
            state.idle += 1
            let woken = condition.wait(until: giveUp)
            state.idle -= 1
            if !woken && state.head >= state.jobs.count {
                state.jobs.removeAll(keepingCapacity: false)
                state.head = 0
                state.running -= 1
                return nil
            }
        }
        let job = state.jobs[state.head]
        state.head += 1
        if state.head == state.jobs.count {
            state.jobs.removeAll(keepingCapacity: true)
            state.head = 0
        } else if state.head > 1024 && state.head * 2 > state.jobs.count {
            state.jobs.removeFirst(state.head)
            state.head = 0
        }
        return job
    }
}

/// Names the calling thread (at most 15 bytes, the kernel's limit) for `top -H` and
/// /proc/PID/task/*/comm. Set by the thread itself: Foundation's `Thread.name` reaches the kernel
/// only when the new thread runs after `start()` has recorded it, which a busy machine does not
/// always do. One `prctl(PR_SET_NAME)`, which truncates as the kernel does, instead of an open,
/// a write and a close of /proc/thread-self/comm (0.4 % of a scan's samples, one per thread).
func nameCurrentThread(_ name: String) {
    _ = name.withCString { fleettrust_name_current_thread($0) }
}
