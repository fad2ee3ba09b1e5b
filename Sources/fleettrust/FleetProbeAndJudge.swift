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

    /// The judge prepared for the whole fleet (files, pins, history, which hosts share a key),
    /// judging each host only when asked, so a scan can write one host and let it go.
    func judging(_ hosts: [InventoryHost], _ results: [ProbeResult], history: FleetHistory? = nil) throws -> FleetJudging {
        // Which keys are shared is found first, so its working memory is gone before the
        // known_hosts files are read.
        let shared = SharedKeyTable(names: hosts.map { CleanText($0.name).value }, results: results)
        var judge = try loadJudge(for: hosts).preparing(for: hosts)
        judge.history = history
        for line in judge.pinLinesApplyingToNone(of: hosts) {
            printError("warning: \(Sanitizer.clean(judge.pins?.path ?? "")):\(line.number): this pin applies to no inventory host")
        }
        return FleetJudging(judge: judge, hosts: hosts, results: results, shared: shared)
    }
}

/// One fleet's hosts and probes with the judge prepared for them.
struct FleetJudging {
    let judge: FleetJudge
    let hosts: [InventoryHost]
    let results: [ProbeResult]
    /// The keys hosts of several names present, written once in the JSON report.
    let shared: SharedKeyTable

    /// The `index`th host judged (`FleetJudge.judge`, pure: the same every time it is asked).
    func judged(_ index: Int) -> JudgedHost {
        judge.judge(hosts[index], results[index], keySharing: shared.sharing(results[index]))
    }
}
