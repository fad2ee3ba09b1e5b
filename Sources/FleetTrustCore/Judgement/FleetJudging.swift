/// One fleet's hosts and probes with the judge prepared for them, judging each host only when
/// asked (`FleetJudge.judge`, pure: the same every time), so a scan can write one host and let it
/// go. `scan`, `sync` and replay judge through it, as the dashboard judges through `LiveFleetJudge`.
public struct FleetJudging: Sendable {
    public let judge: FleetJudge
    public let hosts: [InventoryHost]
    public let results: [ProbeResult]
    /// The keys hosts of several names present, written once in the JSON report.
    public let shared: SharedKeyTable
    /// Recorded probes only: the other scanners' views of a host that disagree with its own.
    public let splitViews: [Int: [SplitViewWitness]]

    /// Finds which keys are shared first, so its working memory is gone before `load` reads the
    /// known_hosts files.
    public init(hosts: [InventoryHost], results: [ProbeResult], history: FleetHistory?, load: () throws -> FleetJudge) throws {
        shared = SharedKeyTable(names: hosts.map { CleanText($0.name).value }, results: results)
        var judge = try load().preparing(for: hosts)
        judge.history = history
        self.judge = judge
        self.hosts = hosts
        self.results = results
        splitViews = SplitViewWitness.find(hosts: hosts, results: results)
    }

    /// The `index`th host judged.
    public func judged(_ index: Int) -> JudgedHost {
        judge.judge(hosts[index], results[index], keySharing: shared.sharing(results[index]), splitView: splitViews[index] ?? [])
    }
}
