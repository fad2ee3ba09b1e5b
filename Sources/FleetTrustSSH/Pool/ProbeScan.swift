import FleetTrustCore
import Synchronization

/// How far a scan has come: hosts finished out of hosts asked for.
public struct ProbeProgress: Hashable, Sendable {
    public var done: Int
    public var total: Int
}

/// One run of the pool over a list of hosts: its results stream, its progress, and cancellation.
///
/// The scan is an actor in front of the pool's worker threads: its bookkeeping (which hosts are
/// still running, what is done, whether it has stopped) is isolated to it, and the threads that
/// run the blocking libssh work hand each result to it with a message; nothing blocking ever runs
/// on the actor or on Swift's cooperative pool.
///
/// Results arrive in `events` as each host finishes, tagged with the host's index in the list;
/// the stream finishes when the last host is done. `cancel()` (or the consumer dropping the
/// stream) stops every probe still queued or in flight, waking handshakes stuck in libssh by
/// shutting their sockets down. (The dashboard rescans a host by starting a new scan of it.)
public actor ProbeScan {
    public nonisolated let hosts: [InventoryHost]
    public nonisolated let events: AsyncStream<ProbeEvent>
    /// Each host's cancellation, which also says what its probe is waiting on.
    private nonisolated let cancellations: [ProbeCancellation]

    /// Hosts finished out of hosts asked for.
    public private(set) var progress: ProbeProgress
    private var running: [Int: ProbeCancellation] = [:]
    private var stopped = false

    /// Results handed over by the worker threads, not yet taken in by the actor. A thread that
    /// finds it empty schedules one task to drain it, so a burst of thousands of results (a
    /// subnet of closed ports) costs one task, not one each.
    private nonisolated let inbox = Mutex<[Finished]>([])

    private struct Finished: Sendable {
        var index: Int
        var result: ProbeResult
    }

    private let continuation: AsyncStream<ProbeEvent>.Continuation
    private let timeout: Duration
    /// Per host, the host-key algorithms `ssh` offers it (`ProbePool.Settings.sshHostKeyAlgorithms`).
    private let sshHostKeyAlgorithms: [[String]?]
    private let workers: WorkerThreads
    private let scheduler: AttemptScheduler
    private nonisolated let counts = Mutex(ProbeLoad())
    /// The pool's bastion connections, which outlive the scan (a dashboard's rescans reuse them).
    private let bastions: BastionConnections

    init(hosts: [InventoryHost], timeout: Duration, sshHostKeyAlgorithms: [[String]?], workers: WorkerThreads,
         scheduler: AttemptScheduler, bastions: BastionConnections) {
        self.sshHostKeyAlgorithms = sshHostKeyAlgorithms
        self.scheduler = scheduler
        self.bastions = bastions
        self.hosts = hosts
        self.timeout = timeout
        self.workers = workers
        self.progress = ProbeProgress(done: 0, total: hosts.count)
        self.counts.withLock { $0.waiting = hosts.count }
        let cancellations = hosts.indices.map { _ in ProbeCancellation() }
        self.cancellations = cancellations
        for index in hosts.indices { running[index] = cancellations[index] }
        let (events, continuation) = AsyncStream.makeStream(of: ProbeEvent.self)
        self.events = events
        self.continuation = continuation
        if hosts.isEmpty { continuation.finish() }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            Task { await self.cancel() }
        }
        for index in hosts.indices { dispatch(index: index, cancellation: cancellations[index]) }
    }

    /// How many hosts are in flight, done and waiting for a thread; for progress lines, from any thread.
    public nonisolated var load: ProbeLoad { counts.withLock { $0 } }

    /// What the probe of host `index` is doing now (`connect`, `banner`, `key-exchange`,
    /// `backing off`…), nil before it started; for progress lines, from any thread.
    public nonisolated func activity(of index: Int) -> String? {
        cancellations.indices.contains(index) ? cancellations[index].activity : nil
    }

    /// Stops everything: queued hosts are skipped, handshakes in flight are interrupted.
    public func cancel() {
        stopped = true
        running.values.forEach { $0.cancel() }
        continuation.finish()
    }

    /// Queues one probe on a worker thread; the thread hands its result back to the actor.
    /// Reads only the actor's constants, so the initializer can call it too.
    private nonisolated func dispatch(index: Int, cancellation: ProbeCancellation) {
        let host = hosts[index]
        let probe = host.probe(timeout: timeout, scheduler: scheduler, routes: bastions, sshHostKeyAlgorithms: sshHostKeyAlgorithms[index])
        workers.submit { [self] due in
            counts.withLock { $0.start() }
            var result = cancellation.isCancelled
                ? ProbeResult(host: host.name, port: host.port, failures: [ProbeFailures.cancelled])
                : probe.probeEndpoint(cancellation: cancellation, due: due)
            // The user's KnownHostsCommand answers for the keys just proved; the judge reads its lines.
            if !cancellation.isCancelled {
                result.knownHostsCommand = KnownHostsCommandRunner().run(for: host, result: result) { cancellation.isCancelled }
            }
            deliver(Finished(index: index, result: result))
        }
    }

    /// Called on a worker thread: queues the result for the actor.
    private nonisolated func deliver(_ finished: Finished) {
        counts.withLock { $0.finish() }
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
        for finished in batch { complete(index: finished.index, result: finished.result) }
    }

    /// Takes one finished probe. A result that arrives after the scan stopped is counted but not
    /// delivered; the actor runs one message at a time, so the stream is finished only after
    /// every result before it is in.
    private func complete(index: Int, result: ProbeResult) {
        progress.done += 1
        running[index] = nil
        guard !stopped else { return }
        continuation.yield(ProbeEvent(index: index, result: result))
        if progress.done == progress.total {
            stopped = true
            continuation.finish()
        }
    }
}
