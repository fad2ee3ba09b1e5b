import Foundation
import FleetTrustCore
import FleetTrustSSH

/// The probe-then-judge pass `scan` and `sync` share, so both see each host exactly as the
/// dashboard does: one `ProbePool` run, then one `FleetJudge.judge` per host.
extension FleetOptions {
    /// Probes every host (a progress line on standard error when it is a terminal). The
    /// connection that decides which key `ssh` meets offers, as `ssh` does, the key types
    /// known_hosts records for the host first; files that do not load leave that to the judge,
    /// which reports them.
    func probe(_ hosts: [InventoryHost], interruption: ScanInterruption? = nil) async -> [ProbeResult] {
        await ProbePool(settings: probeSettings(for: hosts)).probeAll(hosts, progress: standardErrorIsTerminal, interruption: interruption)
    }

    /// The pool's settings with the host-key order `ssh` offers each host (its recorded key
    /// types first), which the deciding connection sends: the same for scan, sync and the dashboard.
    func probeSettings(for hosts: [InventoryHost]) -> ProbePool.Settings {
        var settings = poolSettings
        if let judge = try? loadJudge(for: hosts) { settings.sshHostKeyAlgorithms = { judge.sshHostKeyAlgorithms(for: $0) } }
        return settings
    }

    /// Judges every probe against the files and pins these options name (and the history, for
    /// drift); warns about pin lines that apply to no host and known_hosts lines ssh ignores.
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
        IgnoredKnownHostsLines.warnings(judging.judge.knownHosts).forEach(printError)
        return judging
    }
}
