/// One fleet's hosts and probes with the judge prepared for them, judging each host only when
/// asked (`FleetJudge.judge`, pure: the same every time), so a scan can write one host and let it
/// go. `scan`, `sync` and replay judge through it, as the dashboard judges through `LiveFleetJudge`.
public struct FleetJudging: Sendable {
    public let judge: FleetJudge
    public let hosts: [InventoryHost]
    public let results: [ProbeResult]
    /// By host index: the other hosts presenting one of its keys.
    public let shared: [Int: [CleanText]]

    /// Finds which hosts share keys first, by index (names cleaned only for the hosts that share),
    /// so its working memory is gone before `load` reads the known_hosts files.
    public init(hosts: [InventoryHost], results: [ProbeResult], history: FleetHistory?, load: () throws -> FleetJudge) throws {
        let sharing = SharedKeys.otherHostNames(names: Array(hosts.indices), results: results)
        shared = sharing.mapValues { others in others.map { CleanText(hosts[$0].name) } }
        var judge = try load().preparing(for: hosts)
        judge.history = history
        self.judge = judge
        self.hosts = hosts
        self.results = results
    }

    /// The `index`th host judged.
    public func judged(_ index: Int) -> JudgedHost {
        judge.judge(hosts[index], results[index], sharesKeysWith: shared[index] ?? [])
    }
}
