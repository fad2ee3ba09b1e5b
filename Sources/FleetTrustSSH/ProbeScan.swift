import Synchronization
import FleetTrustCore

/// How far a scan has come: hosts finished out of hosts asked for (rescans count as new work).
public struct ProbeProgress: Hashable, Sendable {
    public var done: Int
    public var total: Int
}

/// One run of the pool over a list of hosts: its results stream, its progress, and its controls.
///
/// Results arrive in `events` as each host finishes, tagged with the host's index in the list.
/// `cancel()` (or the consumer dropping the stream) stops every probe still queued or in flight,
/// waking handshakes stuck in libssh by shutting their sockets down; `cancel(index:)` stops one
/// host (its result arrives, failed at stage `cancelled`); `rescan(index:)` probes one host again
/// and supersedes a probe of it still in flight. Without `keepsOpen`, the stream finishes when
/// the last host is done; with it, the stream stays open for rescans until `cancel()`.
public final class ProbeScan: Sendable {
    public let hosts: [InventoryHost]
    public let events: AsyncStream<ProbeEvent>

    private struct Attempt {
        var generation: Int
        var cancellation: ProbeCancellation
    }

    private struct State {
        var progress: ProbeProgress
        var attempts: [Int: Attempt] = [:]
        var generations: [Int: Int] = [:]
        var stopped = false
    }

    private let continuation: AsyncStream<ProbeEvent>.Continuation
    private let state: Mutex<State>
    private let keepsOpen: Bool
    private let timeout: Duration
    private let workers: WorkerThreads
    private let slots: HandshakeSlots

    init(hosts: [InventoryHost], timeout: Duration, keepsOpen: Bool, workers: WorkerThreads, slots: HandshakeSlots) {
        self.slots = slots
        self.hosts = hosts
        self.timeout = timeout
        self.keepsOpen = keepsOpen
        self.workers = workers
        self.state = Mutex(State(progress: ProbeProgress(done: 0, total: hosts.count)))
        (events, continuation) = AsyncStream.makeStream(of: ProbeEvent.self)
        continuation.onTermination = { [weak self] _ in self?.cancel() }
        if hosts.isEmpty && !keepsOpen { continuation.finish() }
        for index in hosts.indices { submit(index) }
    }

    public var progress: ProbeProgress { state.withLock { $0.progress } }

    /// Stops everything: queued hosts are skipped, handshakes in flight are interrupted.
    public func cancel() {
        let cancellations = state.withLock { state in
            state.stopped = true
            return state.attempts.values.map(\.cancellation)
        }
        cancellations.forEach { $0.cancel() }
        continuation.finish()
    }

    /// Stops the probe of one host, queued or in flight; its result reports stage `cancelled`.
    public func cancel(index: Int) {
        state.withLock { $0.attempts[index]?.cancellation }?.cancel()
    }

    /// Probes one host again; a probe of it still running is stopped and its result dropped.
    /// Returns false when the scan has stopped (finished without `keepsOpen`, or cancelled).
    @discardableResult
    public func rescan(index: Int) -> Bool {
        guard hosts.indices.contains(index) else { return false }
        let previous: ProbeCancellation?? = state.withLock { state in
            guard !state.stopped else { return nil }
            state.progress.total += 1
            return .some(state.attempts[index]?.cancellation)
        }
        guard let previous else { return false }
        previous?.cancel()
        submit(index)
        return true
    }

    private func submit(_ index: Int) {
        let cancellation = ProbeCancellation()
        let generation = state.withLock { state in
            let generation = (state.generations[index] ?? 0) + 1
            state.generations[index] = generation
            state.attempts[index] = Attempt(generation: generation, cancellation: cancellation)
            if state.stopped { cancellation.cancel() }
            return generation
        }
        let probe = HostProbe(host: hosts[index], timeout: timeout, slots: slots)
        workers.submit { [self] in
            let result = cancellation.isCancelled
                ? ProbeResult(host: probe.host.name, port: probe.host.port, failures: [ProbeFailures.cancelled])
                : probe.run(cancellation: cancellation)
            complete(index: index, generation: generation, result: result)
        }
    }

    /// Delivers a result. The yield happens inside the same critical section that counts the
    /// host done, so the worker that finishes the stream can never do so before another
    /// worker's result is in it; `finish()` runs outside, as it calls `onTermination`, which
    /// takes this lock.
    private func complete(index: Int, generation: Int, result: ProbeResult) {
        let finished = state.withLock { state in
            let wasStopped = state.stopped
            state.progress.done += 1
            let current = state.generations[index] == generation
            if current { state.attempts[index] = nil }
            if current && !wasStopped { continuation.yield(ProbeEvent(index: index, result: result)) }
            let finished = !wasStopped && !keepsOpen && state.progress.done == state.progress.total
            if finished { state.stopped = true }
            return finished
        }
        if finished { continuation.finish() }
    }
}
