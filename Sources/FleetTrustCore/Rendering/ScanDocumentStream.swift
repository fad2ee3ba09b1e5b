import Foundation

/// Writes the `scan --format json` document host by host, byte for byte what `ScanDocument`
/// encodes in one piece, so a scan of 10,000 hosts never holds the whole report (or the
/// encoder's tree of it, about four times its size) in memory.
///
/// The document's keys are sorted, and `hosts` sorts after `generated_at` and before every other
/// top-level key: the head is written first, then each host as it is judged, then the
/// `summary` and the other fields, counted while the hosts went by. Each piece is encoded by
/// the same `JSONEncoder` settings and indented to its depth; JSON strings hold no raw newline,
/// so re-indenting line by line cannot touch a value.
public struct ScanDocumentStream {
    private let sink: (Data) throws -> Void
    private let generatedAt: String
    private let knownHostsFiles: [String]
    private let pinFiles: [String]
    private let encoder: JSONEncoder
    /// Counted as the hosts go by; its exit status is the hosts' alone (skipped entries come at the end).
    private var summary = ScanReport.Summary(total: 0, byStatus: [:], exitStatus: 0)

    /// `sink` receives the document in pieces, in order.
    public init(generatedAt: Date = Date(), knownHostsFiles: [String], pinFiles: [String], sink: @escaping (Data) throws -> Void) {
        self.sink = sink
        self.generatedAt = HistoryTime.rfc3339(date: generatedAt)
        self.knownHostsFiles = knownHostsFiles
        self.pinFiles = pinFiles
        encoder = ReportJSON.encoder()
    }

    /// The hosts' exit status so far (what `summary.exit_status` says before skipped entries).
    public var exitStatus: Int32 { summary.exitStatus }

    /// Writes one judged host, in inventory order.
    public mutating func append(_ judged: JudgedHost) throws {
        let entry = try ReportJSON.encode(ScanReport.Host(judged), with: encoder)
        if summary.total == 0 {
            try sink(try head())
        } else {
            try sink(Data(",\n".utf8))
        }
        try sink(Self.indented(entry, by: 4))
        summary.count(judged)
    }

    /// Writes the rest of the document (`skipped`, `summary` and the file lists) and its final newline.
    public mutating func finish(skipped: [SkippedInventoryEntry]) throws {
        var summary = self.summary
        summary.exitStatus = ScanDocument.exitStatus(summary.exitStatus, skipped: skipped)
        guard summary.total > 0 else {
            // No host: the whole (small) document at once, empty `hosts` written as the encoder writes it.
            let report = ScanReport(version: ScanReport.currentVersion, generatedAt: generatedAt, knownHostsFiles: knownHostsFiles,
                                    pinFiles: pinFiles, hosts: [], summary: summary)
            try sink(try ReportJSON.encode(ScanDocument(report: report, skipped: skipped), with: encoder) + Data("\n".utf8))
            return
        }
        let tail = try ReportJSON.encode(Tail(knownHostsFiles: knownHostsFiles, pinFiles: pinFiles, skipped: skipped,
                                           summary: summary, version: ScanReport.currentVersion), with: encoder)
        // `{\n  "known_hosts_files" …}` becomes the fields after `hosts`.
        try sink(Data("\n  ],\n".utf8) + tail.dropFirst(2) + Data("\n".utf8))
    }

    /// `{\n  "generated_at" : "…",\n  "hosts" : [\n`.
    private func head() throws -> Data {
        let only = try ReportJSON.encode(["generated_at": generatedAt], with: encoder)
        return Data("{\n".utf8) + only.dropFirst(2).dropLast(2) + Data(",\n  \"hosts\" : [\n".utf8)
    }

    /// Every line of `json` indented by `spaces` more (no line is empty once empty containers
    /// are compacted), working on the bytes in one buffer rather than appending byte by byte.
    static func indented(_ json: Data, by spaces: Int) -> Data {
        let bytes = [UInt8](json)
        let lines = bytes.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
        var out = [UInt8]()
        out.reserveCapacity(bytes.count + lines * spaces)
        let pad = [UInt8](repeating: UInt8(ascii: " "), count: spaces)
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? bytes.count
            if bytes[start] != UInt8(ascii: "\n") { out.append(contentsOf: pad) }
            out.append(contentsOf: bytes[start..<end])
            start = end
        }
        return Data(out)
    }

    /// The top-level fields after `hosts`, in the document's sorted order.
    private struct Tail: Encodable {
        var knownHostsFiles: [String]
        var pinFiles: [String]
        var skipped: [SkippedInventoryEntry]
        var summary: ScanReport.Summary
        var version: Int

        enum CodingKeys: String, CodingKey {
            case knownHostsFiles = "known_hosts_files", pinFiles = "pin_files", skipped, summary, version
        }
    }
}
