import Foundation

/// What `scan --format json` prints: the `ScanReport` of the judged hosts, and `skipped`, every
/// inventory entry left out for an error (always present, empty when none).
///
/// Skipped entries make the exit status at least 1, and `summary.exit_status` says so too.
/// `scan --replay` reads such a document as a `ScanReport` (the hosts it judged).
public struct ScanDocument: Encodable, Sendable {
    public var report: ScanReport
    public var skipped: [SkippedInventoryEntry]

    public init(report: ScanReport, skipped: [SkippedInventoryEntry]) {
        var report = report
        report.summary.exitStatus = ScanDocument.exitStatus(report.summary.exitStatus, skipped: skipped)
        self.report = report
        self.skipped = skipped
    }

    /// The hosts' exit status, raised to 1 when inventory entries were skipped.
    public static func exitStatus(_ hosts: Int32, skipped: [SkippedInventoryEntry]) -> Int32 {
        skipped.isEmpty ? hosts : max(hosts, 1)
    }

    enum CodingKeys: String, CodingKey { case skipped }

    /// The report's fields, then `skipped`, in one object.
    public func encode(to encoder: Encoder) throws {
        try report.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(skipped, forKey: .skipped)
    }

    public func encoded() throws -> Data {
        try ReportJSON.encode(self)
    }
}
