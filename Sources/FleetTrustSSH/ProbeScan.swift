import FleetTrustCore
import Synchronization

/// How far a scan has come: hosts finished out of hosts asked for (rescans count as new work).
public struct ProbeProgress: Hashable, Sendable {
    public var done: Int
    public var total: Int
}

/// One run of the pool over a list of hosts: its results stream, its progress, and its controls.
///
/// The scan is an actor in front of the pool's worker threads: its bookkeeping (which attempt of
/// which host is current, what is done, whether it has stopped) is isolated to it, and the
/// threads that run the blocking libssh work hand each result to it with a message; nothing
/// blocking ever runs on the actor or on Swift's cooperative pool.
///
/// Results arrive in `events` as each host finishes, tagged with the host's index in the list.
/// `cancel()` (or the consumer dropping the stream) stops every probe still queued or in flight,
/// waking handshakes stuck in libssh by shutting their sockets down; `cancel(index:)` stops one
/// host (its result arrives, failed at stage `cancelled`); `rescan(index:)` probes one host again
/// and supersedes a probe of it still in flight. Without `keepsOpen`, the stream finishes when
/// the last host is done; with it, the stream stays open for rescans until `cancel()`.
public actor ProbeScan {
    public nonisolated let hosts: [InventoryHost]
    public nonisolated let events: AsyncStream<ProbeEvent>

    private struct Attempt {
        var generation: Int
        var cancellation: ProbeCancellation
    }

    /// Hosts finished out of hosts asked for.
    public private(set) var progress: ProbeProgress
    private var attempts: [Int: Attempt] = [:]
    private var generations: [Int: Int] = [:]
    private var stopped = false

    /// Results handed over by the worker threads, not yet taken in by the actor. A thread that
    /// finds it empty schedules one task to drain it, so a burst of thousands of results (a
    /// subnet of closed ports) costs one task, not one each.
    private nonisolated let inbox = Mutex<[Finished]>([])

    private struct Finished: Sendable {
        var index: Int
        var generation: Int
        var result: ProbeResult
    }

    private let continuation: AsyncStream<ProbeEvent>.Continuation
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
        self.progress = ProbeProgress(done: 0, total: hosts.count)
        let first = hosts.indices.map { _ in ProbeCancellation() }
        for index in hosts.indices {
            attempts[index] = Attempt(generation: 1, cancellation: first[index])
            generations[index] = 1
        }
        let (events, continuation) = AsyncStream.makeStream(of: ProbeEvent.self)
        self.events = events
        self.continuation = continuation
        if hosts.isEmpty && !keepsOpen { continuation.finish() }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            Task { await self.cancel() }
        }
        for index in hosts.indices { dispatch(index: index, generation: 1, cancellation: first[index]) }
    }

    /// Stops everything: queued hosts are skipped, handshakes in flight are interrupted.
    public func cancel() {
        stopped = true
        attempts.values.forEach { $0.cancellation.cancel() }
        continuation.finish()
    }

    /// Stops the probe of one host, queued or in flight; its result reports stage `cancelled`.
    public func cancel(index: Int) {
        attempts[index]?.cancellation.cancel()
    }

    /// Probes one host again; a probe of it still running is stopped and its result dropped.
    /// Returns false when the scan has stopped (finished without `keepsOpen`, or cancelled).
    @discardableResult
    public func rescan(index: Int) -> Bool {
        guard hosts.indices.contains(index), !stopped else { return false }
        progress.total += 1
        attempts[index]?.cancellation.cancel()
        let cancellation = ProbeCancellation()
        let generation = (generations[index] ?? 0) + 1
        generations[index] = generation
        attempts[index] = Attempt(generation: generation, cancellation: cancellation)
        dispatch(index: index, generation: generation, cancellation: cancellation)
        return true
    }

    /// Queues one probe on a worker thread; the thread hands its result back to the actor.
    /// Reads only the actor's constants, so the initializer can call it too.
    private nonisolated func dispatch(index: Int, generation: Int, cancellation: ProbeCancellation) {
        let probe = HostProbe(host: hosts[index], timeout: timeout, slots: slots)
        workers.submit { [self] due in
            let result = cancellation.isCancelled
                ? ProbeResult(host: probe.host.name, port: probe.host.port, failures: [ProbeFailures.cancelled])
                : probe.run(cancellation: cancellation, due: due)
            deliver(Finished(index: index, generation: generation, result: result))
        }
    }

    /// Called on a worker thread: queues the result for the actor.
    private nonisolated func deliver(_ finished: Finished) {
        let first = inbox.withLock { inbox in
            inbox.append(finished)
            return inbox.count == 1
        }
        if first { Task { await self.drainInbox() } }
    }

    private func drainInbox() {
        let batch = inbox.withLock { inbox in
            defer { inbox = [] }
            return inbox
        }
        for finished in batch { complete(index: finished.index, generation: finished.generation, result: finished.result) }
    }

    /// Takes one finished probe. A result of an attempt that was superseded by a rescan, or
    /// that arrives after the scan stopped, is counted but not delivered; the actor runs one
    /// message at a time, so the stream is finished only after every result before it is in.
    private func complete(index: Int, generation: Int, result: ProbeResult) {
        progress.done += 1
        let current = generations[index] == generation
        if current { attempts[index] = nil }
        guard !stopped else { return }
        if current { continuation.yield(ProbeEvent(index: index, result: result)) }
        if !keepsOpen && progress.done == progress.total {
            stopped = true
            continuation.finish()
        }
    }
}
