import Glibc
import FleetTrustCore

/// Runs many `HostProbe`s at once on dedicated threads and streams their results.
///
/// The blocking libssh work stays on dedicated OS threads (never Swift's cooperative pool,
/// which runs only as many blocking calls as there are cores); callers talk to each run through
/// its `ProbeScan` actor, which the threads report to. At most `concurrency` key exchanges run at once; more
/// threads than that may wait for servers to connect and speak, so hosts that hang cost one
/// waiting thread for one timeout and never hold up the hosts that answer.
public final class ProbePool: FleetProber, Sendable {
    public struct Settings: Sendable {
        /// How many handshakes may be in flight at once.
        public var concurrency: Int
        /// Bound on each connection attempt (TCP connect, identification, key exchange).
        public var timeout: Duration
        /// How hosts behind bastions or a ProxyCommand are reached (see `BastionConnections`).
        public var routes: BastionConnections.Settings

        public init(concurrency: Int = 64, timeout: Duration = .seconds(5),
                    routes: BastionConnections.Settings = BastionConnections.Settings()) {
            self.concurrency = concurrency
            self.timeout = timeout
            self.routes = routes
        }
    }

    public let settings: Settings
    private let workers: WorkerThreads
    private let slots: HandshakeSlots
    /// The bastions' control masters, kept for the pool's life: one login per bastion however
    /// many scans it runs; stopped when the pool goes.
    private let bastions: BastionConnections

    /// How many hosts may be waited on beyond those exchanging keys: waiting costs a blocked
    /// thread and up to two descriptors, so as many as the descriptor limit allows, up to 1,024.
    static func waitingThreads(concurrency: Int) -> Int {
        let descriptors = Int(raiseDescriptorLimit())
        let affordable = max(0, (descriptors - 256) / 2 - concurrency)
        return min(concurrency * 4, 1024, affordable)
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
        self.workers = WorkerThreads(limit: settings.concurrency + ProbePool.waitingThreads(concurrency: settings.concurrency))
        self.slots = HandshakeSlots(settings.concurrency)
        self.bastions = BastionConnections(settings: settings.routes, timeout: settings.timeout)
    }

    deinit { bastions.close() }

    public func probe(_ hosts: [InventoryHost]) -> AsyncStream<ProbeEvent> {
        start(hosts).events
    }

    /// Starts a scan with its progress and cancellation.
    public func start(_ hosts: [InventoryHost]) -> ProbeScan {
        ProbeScan(hosts: hosts, timeout: settings.timeout, workers: workers, slots: slots, bastions: bastions)
    }
}
