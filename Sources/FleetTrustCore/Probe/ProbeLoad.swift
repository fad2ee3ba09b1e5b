/// Where the hosts of a scan are: in flight (a thread is probing them), done, or waiting for a
/// thread. `scan`'s progress line and the dashboard's header show it.
public struct ProbeLoad: Hashable, Sendable {
    public var inFlight = 0
    public var done = 0
    public var waiting = 0

    public init(inFlight: Int = 0, done: Int = 0, waiting: Int = 0) {
        self.inFlight = inFlight
        self.done = done
        self.waiting = waiting
    }

    public mutating func start() {
        waiting -= 1
        inFlight += 1
    }

    public mutating func finish() {
        inFlight -= 1
        done += 1
    }
}


extension ProbeLoad {
    /// The hosts of several scans at once (the dashboard's rescans run beside its first scan).
    public static func + (a: ProbeLoad, b: ProbeLoad) -> ProbeLoad {
        ProbeLoad(inFlight: a.inFlight + b.inFlight, done: a.done + b.done, waiting: a.waiting + b.waiting)
    }
}
