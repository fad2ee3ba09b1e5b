import Foundation

/// `--format table`: the summary for people (`ScanTable`), then the skipped inventory entries.
/// The columns are sized over every host, so the hosts are kept until the end.
struct TableScanSink: ScanSink {
    let write: (Data) throws -> Void
    let layout: ScanTable.Layout
    private var judged: [JudgedHost] = []

    init(write: @escaping (Data) throws -> Void, layout: ScanTable.Layout) {
        self.write = write
        self.layout = layout
    }

    mutating func begin(_ run: ScanRunFacts) throws {}

    mutating func host(_ judged: JudgedHost) throws {
        self.judged.append(judged)
    }

    mutating func finish(_ outcome: ScanOutcome) async throws {
        try write(Data((ScanTable.render(judged, layout: layout) + "\n" + ScanTable.skippedLines(outcome.skipped)).utf8))
    }
}
