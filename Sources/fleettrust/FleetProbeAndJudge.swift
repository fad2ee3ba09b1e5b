import Foundation
import FleetTrustCore
import FleetTrustSSH

/// The probe-then-judge pass `scan` and `sync` share, so both see each host exactly as the
/// dashboard does: one `ProbePool` run, then one `FleetJudge.judge` per host.
extension FleetOptions {
    /// Probes every host (a progress line on standard error when it is a terminal); a host the
    /// pool never reported is `cancelled`.
    func probe(_ hosts: [InventoryHost], interruption: ScanInterruption? = nil) async -> [ProbeResult] {
        let pool = ProbePool(settings: poolSettings)
        var results = [ProbeResult?](repeating: nil, count: hosts.count)
        let scan = pool.start(hosts)
        let progress = standardErrorIsTerminal ? ScanProgressLine(hosts: hosts, activity: scan.activity(of:), load: { scan.load }) : nil
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

    /// Judges every probe against the files and pins these options name (and the history, for
    /// drift); warns about pin lines that apply to no host.
    func judge(_ hosts: [InventoryHost], _ results: [ProbeResult], history: FleetHistory? = nil) throws -> [JudgedHost] {
        let judging = try judging(hosts, results, history: history)
        return hosts.indices.map(judging.judged)
    }

    /// The judge prepared for the whole fleet (files, pins, history, which hosts share a key).
    func judging(_ hosts: [InventoryHost], _ results: [ProbeResult], history: FleetHistory? = nil) throws -> FleetJudging {
        let judging = try FleetJudging(hosts: hosts, results: results, history: history) { try loadJudge(for: hosts) }
        for line in judging.judge.pinLinesApplyingToNone(of: hosts) {
            printError("warning: \(Sanitizer.clean(judging.judge.pins?.path ?? "")):\(line.number): this pin applies to no inventory host")
        }
        return judging
    }
}
