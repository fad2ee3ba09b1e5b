/// A `FleetProber` that answers from a recorded scan (`--replay`) instead of the network, so the
/// dashboard judges, shows and saves a document's proof exactly as it does a live probe's.
///
/// Hosts are matched to recordings by value, in order: the `n`th time a host appears in a request
/// it gets the `n`th recording of that host. A merged document can hold one host several times
/// (once per scanner); asked for the document's hosts in its order, each gets its own probe.
public struct RecordedProbes: FleetProber {
    private let recordings: [InventoryHost: [ProbeResult]]

    public init(hosts: [InventoryHost], results: [ProbeResult]) {
        var recordings: [InventoryHost: [ProbeResult]] = [:]
        for (host, result) in zip(hosts, results) { recordings[host, default: []].append(result) }
        self.recordings = recordings
    }

    public func probe(_ hosts: [InventoryHost]) -> AsyncStream<ProbeEvent> {
        var seen: [InventoryHost: Int] = [:]
        let events = hosts.enumerated().compactMap { index, host -> ProbeEvent? in
            guard let recorded = recordings[host], !recorded.isEmpty else { return nil }
            let occurrence = seen[host, default: 0]
            seen[host] = occurrence + 1
            return ProbeEvent(index: index, result: recorded[min(occurrence, recorded.count - 1)])
        }
        return AsyncStream { continuation in
            for event in events { continuation.yield(event) }
            continuation.finish()
        }
    }
}
