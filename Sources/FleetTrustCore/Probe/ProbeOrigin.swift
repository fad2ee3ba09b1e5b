import Foundation

/// Which scanner proved a probe's keys, and when: a recorded probe (replay, a merged document)
/// comes from some other machine's network, and a person deciding to trust its keys needs to
/// know whose view of the host they are trusting.
public struct ProbeOrigin: Hashable, Sendable {
    /// The scanner's name (`scan --scanner-name`), cleaned.
    public var scanner: CleanText
    /// When the scanner finished probing the host (RFC 3339, UTC), when the document says.
    public var scannedAt: CleanText?

    public init(scanner: String, scannedAt: String?) {
        self.scanner = CleanText(scanner, limit: 128)
        self.scannedAt = scannedAt.map { CleanText($0, limit: 40) }
    }
}

extension ProbeOrigin {
    /// The `scanned_from` and `scanned_at` of a recorded host entry (scan documents from version 3).
    struct Recorded: Decodable {
        var scannedFrom: String?
        var scannedAt: String?

        enum CodingKeys: String, CodingKey {
            case scannedFrom = "scanned_from", scannedAt = "scanned_at"
        }

        /// Nil for an entry that names no scanner (documents before version 3).
        var origin: ProbeOrigin? { scannedFrom.map { ProbeOrigin(scanner: $0, scannedAt: scannedAt) } }
    }
}
