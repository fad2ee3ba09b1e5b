import Foundation

/// One scan after its probes (or a replay after its document is read): judges each host once,
/// hands it to the sink, records the hosts that proved keys in the history, and computes the
/// outcome (counts, skipped entries, the record's success, the exit status) before the sink
/// finishes, so the report and the process never disagree about the exit status.
public struct ScanRun {
    /// How many hosts, and the `index`th judged (pure: `FleetJudge.judge` of its probe).
    public var count: Int
    public var judged: (Int) -> JudgedHost
    public var facts: ScanRunFacts
    public var skipped: [SkippedInventoryEntry]
    /// Records the hosts that proved keys; returns why it could not. Nil: nothing is recorded.
    public var record: (([HistorySighting]) async -> String?)?
    /// When the scan began (its probes included), for the duration.
    public var started: ContinuousClock.Instant

    public init(count: Int, judged: @escaping (Int) -> JudgedHost, skipped: [SkippedInventoryEntry],
                record: (([HistorySighting]) async -> String?)?, started: ContinuousClock.Instant = .now, facts: ScanRunFacts) {
        self.count = count
        self.judged = judged
        self.facts = facts
        self.skipped = skipped
        self.record = record
        self.started = started
    }

    /// Runs the scan into `sink` and returns its outcome.
    public func run(into sink: inout any ScanSink) async throws -> ScanOutcome {
        try sink.begin(facts)
        let seenAt = HistoryTime.nowMilliseconds()
        var summary = ScanReport.Summary(total: 0, byStatus: [:], exitStatus: 0)
        var sightings: [HistorySighting] = []
        for index in 0..<count {
            let host = judged(index)
            if record != nil, let sighting = HistorySighting(host, source: .scan, seenAt: seenAt) { sightings.append(sighting) }
            try sink.host(host)
            summary.count(host)
        }
        let problem = await record?(sightings)
        summary.exitStatus = ExitStatusRule.run(hosts: summary.exitStatus, skipped: !skipped.isEmpty, recordFailed: problem != nil)
        let duration = started.duration(to: .now)
        let outcome = ScanOutcome(summary: summary, skipped: skipped, recordProblem: problem,
                                  durationSeconds: Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18,
                                  finishedAt: Date())
        try await sink.finish(outcome)
        return outcome
    }
}

extension ScanRun {
    /// A run a signal stopped: no sink is written; the hosts that proved their keys are judged
    /// and recorded (when the run records). Returns how many proved keys, and why the record
    /// failed (nil: recorded, or nothing to record with).
    public func recordProved() async -> (proved: Int, problem: String?) {
        let seenAt = HistoryTime.nowMilliseconds()
        var proved = 0
        var sightings: [HistorySighting] = []
        for index in 0..<count {
            let host = judged(index)
            guard !host.probe.keys.isEmpty else { continue }
            proved += 1
            if record != nil, let sighting = HistorySighting(host, source: .scan, seenAt: seenAt) { sightings.append(sighting) }
        }
        return (proved, await record?(sightings))
    }
}
