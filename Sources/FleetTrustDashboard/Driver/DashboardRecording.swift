import FleetTrustCore
import Foundation

/// `fleettrust --replay FILE`: the dashboard over a recorded scan document (one scanner's report
/// or a merged one) instead of an inventory. The recorded proof stands in for the probes and is
/// judged by the same judge against this machine's known_hosts, pins and policies; nothing is
/// probed, and scanners that disagree about a host are shown as a split view.
public struct DashboardRecording: Sendable {
    public let path: String
    public let hosts: [InventoryHost]
    public let results: [ProbeResult]
    public let splitViews: [Int: [SplitViewWitness]]

    /// Reads and checks the document (as `scan --replay` does) at `file`, named `path` as the
    /// user gave it, under this machine's ssh `configuration`; throws `ScanReplay.Problem` for an
    /// unreadable or invalid one.
    public init(path: String, file: String, under configuration: InventoryReadOptions? = nil) throws {
        let pairs = try ScanReplay.load(path: file, source: path, under: configuration)
        self.path = path
        hosts = pairs.map(\.host)
        results = pairs.map(\.result)
        splitViews = SplitViewWitness.find(hosts: hosts, results: results)
    }

    public var prober: RecordedProbes { RecordedProbes(hosts: hosts, results: results) }

    /// What the status line says when the dashboard opens: where the proof comes from.
    public var notice: String {
        let scanners = Set(results.compactMap { $0.scanner?.value }).sorted()
        var text = "Recorded scan \(Sanitizer.clean(path, limit: 200)): \(Counted.of(hosts.count, "host"))"
        if !scanners.isEmpty { text += " proved by " + scanners.prefix(8).joined(separator: ", ") + (scanners.count > 8 ? ", …" : "") }
        text += "; judged against your files, nothing is probed"
        if !splitViews.isEmpty { text += "; \(Counted.of(splitViews.count, "entry", "entries")) in a split view" }
        return text + "."
    }
}
