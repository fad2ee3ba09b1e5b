/// The one thing the dashboard and `scan` need from the network: keys proved by each host.
///
/// The libssh worker pool implements it; consumers see only value types. Results arrive as each
/// host finishes; cancelling the consuming task stops the handshakes still in flight.
public protocol FleetProber: Sendable {
    func probe(_ hosts: [InventoryHost]) -> AsyncStream<ProbeEvent>
    /// The hosts in flight and waiting over every probe run going on now; nil when the prober
    /// has no such thing (a recording answers at once).
    var load: ProbeLoad? { get }
}

extension FleetProber {
    public var load: ProbeLoad? { nil }
}

/// One host's finished probe, with the index of that host in the list given to `probe`.
public struct ProbeEvent: Sendable {
    public var index: Int
    public var result: ProbeResult

    public init(index: Int, result: ProbeResult) {
        self.index = index
        self.result = result
    }
}
