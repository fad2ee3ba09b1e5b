import Foundation

/// `--format prometheus`: node_exporter textfile metrics (`PrometheusTextfile`), carrying the
/// outcome's exit status, duration and skipped count.
struct PrometheusScanSink: ScanSink {
    let write: (Data) throws -> Void
    private var judged: [JudgedHost] = []

    init(write: @escaping (Data) throws -> Void) {
        self.write = write
    }

    mutating func begin(_ run: ScanRunFacts) throws {}

    mutating func host(_ judged: JudgedHost) throws {
        self.judged.append(judged)
    }

    mutating func finish(_ outcome: ScanOutcome) async throws {
        let metrics = PrometheusTextfile(judged: judged, durationSeconds: outcome.durationSeconds, finishedAt: outcome.finishedAt,
                                         skippedEntries: outcome.skipped.count, exitStatus: outcome.exitStatus)
        try write(Data(metrics.rendered().utf8))
    }
}
