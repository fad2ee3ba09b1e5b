import Foundation

/// Writes the `scan --format json` document host by host in its layout (`ScanDocumentLayout`):
/// each judged host is rendered, encoded as one compact line and let go, so a scan of 10,000
/// hosts never holds the report (or an encoder's tree of it) in memory, and nothing is
/// re-indented after encoding. Host lines are written by `CompactJSON` (the encoder's bytes,
/// without its cost per value); the rest of the document by the encoder.
public struct ScanDocumentWriter {
    private let sink: (Data) throws -> Void
    private let generatedAt: String
    private let knownHostsFiles: [String]
    private let pinFiles: [String]
    private let sharedKeys: SharedKeyTable
    private let encoder = ScanDocumentLayout.encoder()
    /// The line being written, its buffer kept from host to host.
    private var line = CompactJSON()
    /// Counted as the hosts go by; its exit status is the hosts' alone.
    private var summary = ScanReport.Summary(total: 0, byStatus: [:], exitStatus: 0)

    /// `sink` receives the document in pieces, in order; `sharedKeys` is the run's table (each
    /// host's keys carry their counts already, in `JudgedHost.keySharing`).
    public init(generatedAt: Date = Date(), knownHostsFiles: [String], pinFiles: [String], sharedKeys: SharedKeyTable,
                sink: @escaping (Data) throws -> Void) {
        self.sink = sink
        self.generatedAt = HistoryTime.rfc3339(date: generatedAt)
        self.knownHostsFiles = knownHostsFiles
        self.pinFiles = pinFiles
        self.sharedKeys = sharedKeys
    }

    /// Writes one judged host, in inventory order.
    public mutating func append(_ judged: JudgedHost) throws {
        let entry = ScanReport.Host(judged, generatedAt: generatedAt)
        line.reset()
        let encoded: Data
        do {
            try entry.write(to: &line)
            encoded = Data(line.bytes)
        } catch is CompactJSON.NonFiniteNumber {
            encoded = try encoder.encode(entry)
        }
        if summary.total == 0 { try sink(try ScanDocumentLayout.head(generatedAt: generatedAt, encoder: encoder)) }
        try sink(ScanDocumentLayout.beforeHost(summary.total) + encoded)
        summary.count(judged)
    }

    /// Writes the rest of the document and its final newline; `exitStatus` is the run's outcome
    /// (what the process exits with), which `summary.exit_status` always says.
    public mutating func finish(skipped: [SkippedInventoryEntry], exitStatus: Int32) throws {
        if summary.total == 0 { try sink(try ScanDocumentLayout.head(generatedAt: generatedAt, encoder: encoder)) }
        var summary = self.summary
        summary.exitStatus = exitStatus
        try sink(try ScanDocumentLayout.tail(hosts: summary.total, fields: [
            ("known_hosts_files", try encoder.encode(knownHostsFiles)), ("pin_files", try encoder.encode(pinFiles)),
            ("shared_keys", Self.compact(sharedKeys.entries)), ("skipped", try encoder.encode(skipped)),
            ("summary", try encoder.encode(summary)), ("version", try encoder.encode(ScanReport.currentVersion)),
        ]))
    }

    /// The shared keys as the encoder writes them (`ScanReportLineTests`), without its tree: a
    /// fleet cloned from one image shares its keys across every host name.
    static func compact(_ entries: [SharedKeyTable.Entry]) -> Data {
        var json = CompactJSON()
        json.beginArray()
        for entry in entries { entry.write(to: &json) }
        json.endArray()
        return Data(json.bytes)
    }
}
