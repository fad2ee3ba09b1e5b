import Glibc
import FleetTrustCore
import Synchronization

/// Runs many `HostProbe`s at once and streams their results.
///
/// Latency is not the bound: a host's probe spends nearly all its time waiting for round trips
/// (connect, identification, key exchange), so as many hosts are in flight at once as the
/// settings allow, bounded by the descriptors this process can afford. Each host's probe is
/// steered from a dedicated OS thread (never Swift's cooperative pool, which runs only as many
/// blocking calls as there are cores); its connections' key exchanges run on the
/// `ExchangeEngine`'s few event-loop threads, so a thousand connections waiting on the network
/// cost sockets, not threads. What bounds the load on any one server is `TargetPoliteness`.
/// Callers talk to each run through its `ProbeScan` actor, which the threads report to.
public final class ProbePool: FleetProber, Sendable {
    public struct Settings: Sendable {
        /// The most hosts in flight at once (each with up to three connections).
        public var concurrency: Int
        /// Bound on each connection attempt (TCP connect, identification, key exchange).
        public var timeout: Duration
        /// How hosts behind bastions or a ProxyCommand are reached (see `BastionConnections`).
        public var routes: BastionConnections.Settings
        /// The host-key algorithms `ssh` offers a host, in its order for that host (known_hosts
        /// moves the recorded types first): what the connection shaped like `ssh`'s offers. Nil
        /// from it: `ssh`'s order with nothing recorded.
        public var sshHostKeyAlgorithms: @Sendable (InventoryHost) -> [String]? = { _ in nil }

        public init(concurrency: Int = 512, timeout: Duration = .seconds(5),
                    routes: BastionConnections.Settings = BastionConnections.Settings()) {
            self.concurrency = concurrency
            self.timeout = timeout
            self.routes = routes
        }
    }

    public let settings: Settings
    private let workers: WorkerThreads
    private let scheduler: AttemptScheduler
    /// The bastions' control masters, kept for the pool's life: one login per bastion however
    /// many scans it runs; stopped when the pool goes.
    private let bastions: BastionConnections
    private let scans = Mutex<[ScanReference]>([])

    /// Descriptors one host in flight may hold: four connections at once (the one shaped like
    /// `ssh`'s and three for its key types side by side), one of them libssh's with a duplicate descriptor.
    static let descriptorsPerHost = 5

    /// How many hosts may be in flight: `concurrency`, or fewer if the descriptor limit
    /// (raised as far as allowed) cannot hold them, keeping 256 for everything else.
    static func hostsInFlight(concurrency: Int) -> Int {
        let descriptors = Int(raiseDescriptorLimit())
        return max(1, min(concurrency, (descriptors - 256) / descriptorsPerHost))
    }

    /// Raises this process's soft limit on open descriptors towards its hard limit (capped at
    /// 65,536): a stock login's 1,024 would cap a fleet scan well below what the machine can do.
    /// Returns the soft limit now in force.
    @discardableResult
    static func raiseDescriptorLimit() -> rlim_t {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        let wanted = min(limit.rlim_max, 65536)
        if limit.rlim_cur < wanted {
            var raised = limit
            raised.rlim_cur = wanted
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return wanted }
        }
        return limit.rlim_cur
    }

    public init(settings: Settings = Settings()) {
        self.settings = settings
        let hosts = ProbePool.hostsInFlight(concurrency: settings.concurrency)
        self.workers = WorkerThreads(limit: hosts)
        self.scheduler = AttemptScheduler(helperThreads: hosts * 2)
        self.bastions = BastionConnections(settings: settings.routes, timeout: settings.timeout)
    }

    deinit { bastions.close() }

    public func probe(_ hosts: [InventoryHost]) -> AsyncStream<ProbeEvent> {
        start(hosts).events
    }

    /// Starts a scan with its progress and cancellation.
    public func start(_ hosts: [InventoryHost]) -> ProbeScan {
        bastions.startMasters(for: hosts)
        let scan = ProbeScan(hosts: hosts, timeout: settings.timeout, sshHostKeyAlgorithms: hosts.map(settings.sshHostKeyAlgorithms), workers: workers, scheduler: scheduler, bastions: bastions)
        scans.withLock { list in
            list.removeAll { $0.scan == nil }
            list.append(ScanReference(scan: scan))
        }
        return scan
    }

    /// The hosts in flight and waiting over every scan still running; nil when none is.
    public var load: ProbeLoad? {
        scans.withLock { list in
            list.removeAll { $0.scan == nil }
            let running = list.compactMap { $0.scan?.load }.filter { $0.inFlight + $0.waiting > 0 }
            return running.isEmpty ? nil : running.reduce(ProbeLoad(), +)
        }
    }

    /// A scan the pool does not keep alive: it lives as long as its probes and its stream.
    private struct ScanReference: Sendable {
        weak var scan: ProbeScan?
    }
}
