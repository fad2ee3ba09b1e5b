import Foundation
import FleetTrustCore

extension ProbePool {
    /// Probes every host and returns one result per host, in inventory order, each stamped with
    /// when it finished; a host the pool never reported (the scan was stopped) is `cancelled`.
    /// With `progress`, a line on standard error says how far it is; an `interruption` cancels
    /// every probe at once. The probe-then-judge pass `scan` and `sync` share, so both see each
    /// host exactly as the dashboard does.
    public func probeAll(_ hosts: [InventoryHost], progress showsProgress: Bool,
                         interruption: ScanInterruption? = nil) async -> [ProbeResult] {
        var results = [ProbeResult?](repeating: nil, count: hosts.count)
        let scan = start(hosts)
        let progress = showsProgress ? ScanProgressLine(hosts: hosts, activity: scan.activity(of:), load: { scan.load }) : nil
        interruption?.whenReceived { Task { await scan.cancel() } }
        for await event in scan.events {
            var result = event.result
            result.finishedAt = Date()
            results[event.index] = result
            progress?.finished(event.index)
        }
        progress?.end()
        return hosts.indices.map { index in
            results[index] ?? ProbeResult(host: hosts[index].address, port: hosts[index].port,
                                          failures: [ProbeFailure(stage: .cancelled, code: .cancelled, message: "the scan was stopped")])
        }
    }
}
