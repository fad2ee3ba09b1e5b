import Foundation
import Glibc
import CLinux
import FleetTrustCore
import Synchronization

/// What one connection of a probe asks the engine for: a key exchange with one server.
struct ExchangeRequest: Sendable {
    var address: SocketAddress
    var port: Int
    var offer: ExchangeSession.Offer
    /// The key exchange methods `ssh` offers the host.
    var keyExchange = KeyExchangeAlgorithms.openSSHDefault
    /// Bound on each stage: the connect and the server's identification, then the key exchange.
    var timeout: Duration
    /// When the connect and identification must be done by, if the attempt starts at once;
    /// one that first waited for a permit or is a retry gets `timeout` from when it starts.
    var connectDeadline: ContinuousClock.Instant
    var cancellation: ProbeCancellation
    var politeness: TargetPoliteness
    /// The connection that decides which key `ssh` meets: never replaced by a new one after a
    /// timeout (see `AttemptOutcome.load(decides:)`).
    var decides = false
}

/// Runs our key-exchange client for thousands of connections at once on a few threads.
///
/// A probe's connection spends nearly all its life waiting on the network, and its computing (an
/// X25519 exchange, a hash, a signature check) is a fraction of a millisecond; a thread per
/// connection spent more CPU on starting, switching and waking threads than on the exchange.
/// So each connection is an `ExchangeSession` state machine owned by one `ExchangeLoop`: a
/// thread waiting in `epoll_wait` for any of its sockets, and computing on the one that is ready.
/// The loops are started on first use and live as long as the process (idle, they wait in the
/// kernel and cost nothing). Politeness, timeouts, retries when load explains a failure and
/// cancellation work as for a thread-driven attempt (`EngineConnection`).
final class ExchangeEngine: Sendable {
    static let shared = ExchangeEngine(threads: min(4, max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))))

    private let loops: [ExchangeLoop]
    private let turn = Atomic<Int>(0)

    init(threads: Int) {
        loops = (0..<max(1, threads)).map { _ in ExchangeLoop() }
    }

    /// Runs every request at once; blocks the calling thread until all have ended.
    func run(_ requests: [ExchangeRequest]) -> [AttemptOutcome] {
        let gathered = Gathered<AttemptOutcome>(count: requests.count)
        for (index, request) in requests.enumerated() {
            start(request) { gathered.put($0, at: index) }
        }
        return gathered.wait()
    }

    /// Starts one request; `completion` is called once, on a loop thread (or at once, on the
    /// calling thread, when the probe is already cancelled).
    func start(_ request: ExchangeRequest, completion: @escaping @Sendable (AttemptOutcome) -> Void) {
        let loop = loops[turn.wrappingAdd(1, ordering: .relaxed).oldValue % loops.count]
        EngineConnection(request: request, loop: loop, completion: completion).begin()
    }
}

/// One event-loop thread of the engine: an epoll set of sockets, a queue of commands from
/// other threads, and the deadlines of its connections.
final class ExchangeLoop: @unchecked Sendable {
    enum Command {
        /// The connection got its permit; `waited` says whether it had to wait for it.
        case start(EngineConnection, TargetPoliteness.Permit, waited: Bool)
        case cancel(EngineConnection)
    }

    private let epoll: Int32
    private let wake: Int32
    private let inbox = Mutex<[Command]>([])
    private let started = Atomic<Bool>(false)
    // Touched only on the loop's thread:
    private var connections: [UInt64: EngineConnection] = [:]
    private var deadlines = DeadlineHeap()
    private var nextToken: UInt64 = 1
    /// Where `recv` puts what a ready socket holds, before it is appended to its session.
    let scratch = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 64 * 1024)

    init() {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        wake = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = 0
        _ = epoll_ctl(epoll, EPOLL_CTL_ADD, wake, &event)
    }

    /// Queues a command for the loop's thread (from any thread), starting it on first use.
    func post(_ command: Command) {
        if !started.load(ordering: .acquiring), started.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged {
            let thread = Thread { [self] in run() }
            thread.stackSize = 1 << 20
            thread.start()
        }
        let first = inbox.withLock { inbox in
            inbox.append(command)
            return inbox.count == 1
        }
        if first {
            var one: UInt64 = 1
            _ = write(wake, &one, 8)
        }
    }

    // MARK: On the loop's thread

    /// Adds a connection's socket to the set; its token names it in events and deadlines.
    func watch(_ connection: EngineConnection, fd: Int32, events: UInt32) -> Bool {
        keep(connection)
        let token = connection.token
        var event = epoll_event()
        event.events = events
        event.data.u64 = token
        return epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) == 0
    }

    /// Asks epoll to report a watched socket again on the loop's next turn if it is still ready:
    /// edge-triggered, a socket left with unread bytes would not be reported again.
    func watchAgain(_ connection: EngineConnection, fd: Int32, events: UInt32) {
        var event = epoll_event()
        event.events = events
        event.data.u64 = connection.token
        _ = epoll_ctl(epoll, EPOLL_CTL_MOD, fd, &event)
    }

    /// Keeps a connection without a socket (backing off) reachable by its deadline.
    func keep(_ connection: EngineConnection) {
        if connection.token == 0 {
            connection.token = nextToken
            nextToken += 1
        }
        connections[connection.token] = connection
    }

    /// Forgets a finished connection (closing its socket took it out of the epoll set).
    func forget(_ connection: EngineConnection) {
        connections[connection.token] = nil
    }

    func arm(_ connection: EngineConnection, at deadline: ContinuousClock.Instant) {
        connection.deadlineGeneration &+= 1
        deadlines.push(DeadlineHeap.Entry(deadline: deadline, token: connection.token,
                                          generation: connection.deadlineGeneration))
    }

    /// Waits up to `milliseconds` for events and hands each to its connection; returns how many.
    private func wait(into events: inout [epoll_event], milliseconds: Int32) -> Int {
        let ready = events.withUnsafeMutableBufferPointer { buffer in
            epoll_wait(epoll, buffer.baseAddress, Int32(buffer.count), milliseconds)
        }
        for index in 0..<max(0, Int(ready)) {
            let token = events[index].data.u64
            if token == 0 {
                var count: UInt64 = 0
                _ = read(wake, &count, 8)
            } else if let connection = connections[token] {
                connection.handle(events: events[index].events)
            }
        }
        return Int(ready)
    }

    private func run() {
        nameCurrentThread("fleettrust-kex")
        // Our identification is the local ssh's, read once from `ssh -V`: read it before the
        // first connection, so that connection's identification follows its connect at once, as
        // `ssh`'s does, not a child process's run later.
        _ = ClientIdentification.line
        var events = [epoll_event](repeating: epoll_event(), count: 512)
        while true {
            let timeout = deadlines.milliseconds(untilNextFrom: .now)
            var ready = wait(into: &events, milliseconds: timeout)
            // A full batch may leave events behind: a connection whose connect or reply is among
            // them must not be timed out below for the loop's own lateness. A few more batches
            // are drained first (bounded, so streaming peers cannot hold the deadlines off).
            for _ in 0..<4 where ready == events.count { ready = wait(into: &events, milliseconds: 0) }
            let commands = inbox.withLock { inbox in
                defer { inbox = [] }
                return inbox
            }
            for command in commands {
                switch command {
                case .start(let connection, let permit, let waited): connection.connect(permit, waited: waited)
                case .cancel(let connection): connection.cancelled()
                }
            }
            let now = ContinuousClock.now
            while let due = deadlines.popDue(at: now) {
                if let connection = connections[due.token], connection.deadlineGeneration == due.generation {
                    connection.deadlinePassed()
                }
            }
        }
    }
}

/// The loop's deadlines, soonest first; an entry whose connection moved on is skipped by its
/// generation when it comes due.
struct DeadlineHeap {
    struct Entry {
        var deadline: ContinuousClock.Instant
        var token: UInt64
        var generation: UInt64
    }

    private var entries: [Entry] = []

    /// How long `epoll_wait` may sleep: until the soonest deadline (rounded up), -1 with none.
    func milliseconds(untilNextFrom now: ContinuousClock.Instant) -> Int32 {
        guard let first = entries.first else { return -1 }
        let remaining = first.deadline - now
        guard remaining > .zero else { return 0 }
        return Int32(min((remaining.seconds * 1000).rounded(.up), 60_000))
    }

    mutating func push(_ entry: Entry) {
        entries.append(entry)
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].deadline < entries[parent].deadline else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    mutating func popDue(at now: ContinuousClock.Instant) -> Entry? {
        guard let first = entries.first, first.deadline <= now else { return nil }
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < entries.count && entries[left].deadline < entries[smallest].deadline { smallest = left }
                if right < entries.count && entries[right].deadline < entries[smallest].deadline { smallest = right }
                guard smallest != parent else { break }
                entries.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return first
    }
}

/// Outcomes arriving from several threads, and the wait for the last one.
final class Gathered<Outcome: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var outcomes: [Outcome?]
    private var missing: Int

    init(count: Int) {
        outcomes = Array(repeating: nil, count: count)
        missing = count
    }

    /// The waiter is woken after the lock is let go: woken while it is held, it would run only
    /// to block on the lock again, a second sleep and wake-up per gathered call.
    func put(_ outcome: Outcome, at index: Int) {
        condition.lock()
        outcomes[index] = outcome
        missing -= 1
        let last = missing == 0
        condition.unlock()
        if last { condition.broadcast() }
    }

    func wait() -> [Outcome] {
        condition.lock()
        defer { condition.unlock() }
        while missing > 0 { condition.wait() }
        return outcomes.compactMap { $0 }
    }
}
