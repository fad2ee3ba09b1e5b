import Foundation
import Synchronization

/// Up to `limit` dedicated OS threads that run blocking jobs in order of submission.
///
/// libssh blocks; on Swift's cooperative pool only as many handshakes as cores (2 here) would
/// run at once. Threads are started on demand and exit when the queue runs dry, so an idle
/// pool holds no threads.
final class WorkerThreads: Sendable {
    typealias Job = @Sendable () -> Void

    private struct State {
        var jobs: [Job] = []
        var head = 0
        var running = 0
    }

    let limit: Int
    private let state = Mutex(State())

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    func submit(_ job: @escaping Job) {
        let startThread = state.withLock { state in
            state.jobs.append(job)
            guard state.running < limit else { return false }
            state.running += 1
            return true
        }
        if startThread { spawn() }
    }

    private func spawn() {
        let thread = Thread { [self] in
            // Named for `top -H` and /proc/PID/task/*/comm (at most 15 bytes, the kernel's limit).
            Thread.current.name = "fleettrust-ssh"
            while let job = nextJob() { job() }
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    private func nextJob() -> Job? {
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
