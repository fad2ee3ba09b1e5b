import Foundation

/// `--format json`: the scan document, streamed (`ScanDocumentWriter`): each host is written as
/// it is judged and let go.
struct JSONScanSink: ScanSink {
    let write: (Data) throws -> Void
    private var writer: ScanDocumentWriter?

    init(write: @escaping (Data) throws -> Void) {
        self.write = write
    }

    mutating func begin(_ run: ScanRunFacts) throws {
        writer = ScanDocumentWriter(generatedAt: run.generatedAt, knownHostsFiles: run.knownHostsFiles, pinFiles: run.pinFiles,
                                    sharedKeys: run.sharedKeys, sink: write)
    }

    mutating func host(_ judged: JudgedHost) throws {
        try writer?.append(judged)
    }

    mutating func finish(_ outcome: ScanOutcome) async throws {
        try writer?.finish(skipped: outcome.skipped, exitStatus: outcome.exitStatus)
    }
}
