import Foundation

/// A scan document read back (`scan --replay`, `merge`, programs in Swift): decode-only and
/// strict. A value this version cannot type (an unknown status, verdict, failure code or stage)
/// is an error naming the host's index, never a default: a recorded `changed` must not come back
/// as anything quieter. Fields a version did not have are optional or empty (versions 1 to 3
/// read); unknown fields are ignored.
public struct RecordedScan: Decodable, Sendable {
    public var version: Int
    public var generatedAt: String?
    public var knownHostsFiles: [String]
    public var pinFiles: [String]
    public var hosts: [Host]
    public var summary: ScanReport.Summary
    public var skipped: [SkippedInventoryEntry]
    public var sharedKeys: [SharedKeyTable.Entry]
    public var mergedFrom: [MergedReport]

    /// One report a merged document was made from (`fleettrust merge`).
    public struct MergedReport: Codable, Sendable, Equatable {
        public var scanner: String
        public var generatedAt: String?
        public var hosts: Int
        public var file: String

        enum CodingKeys: String, CodingKey { case scanner, generatedAt = "generated_at", hosts, file }

        public init(scanner: String, generatedAt: String?, hosts: Int, file: String) {
            self.scanner = scanner
            self.generatedAt = generatedAt
            self.hosts = hosts
            self.file = file
        }
    }

    enum CodingKeys: String, CodingKey {
        case version, hosts, summary, skipped
        case generatedAt = "generated_at", knownHostsFiles = "known_hosts_files", pinFiles = "pin_files"
        case sharedKeys = "shared_keys", mergedFrom = "merged_from"
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        version = try c.decode(Int.self, forKey: .version)
        generatedAt = try c.decodeIfPresent(String.self, forKey: .generatedAt)
        knownHostsFiles = try c.decodeIfPresent([String].self, forKey: .knownHostsFiles) ?? []
        pinFiles = try c.decodeIfPresent([String].self, forKey: .pinFiles) ?? []
        hosts = try c.decode([Host].self, forKey: .hosts)
        summary = try c.decode(ScanReport.Summary.self, forKey: .summary)
        skipped = try c.decodeIfPresent([SkippedInventoryEntry].self, forKey: .skipped) ?? []
        sharedKeys = try c.decodeIfPresent([SharedKeyTable.Entry].self, forKey: .sharedKeys) ?? []
        mergedFrom = try c.decodeIfPresent([MergedReport].self, forKey: .mergedFrom) ?? []
    }

    /// The whole document at once (documents of a few thousand hosts; `ScanReplay` and `merge`
    /// read large ones host by host).
    public static func decode(_ data: Data) throws -> RecordedScan {
        try JSONDecoder().decode(RecordedScan.self, from: data)
    }

    /// The versions read: 1 to the current one.
    public static let readableVersions = 1...ScanReport.currentVersion

    /// One recorded key.
    public struct Key: Decodable, Sendable, Equatable {
        public var type: String
        public var bits: Int
        public var fingerprint: String?
        public var key: String
        public var verdict: KeyVerdict
        public var plainKeyVerdict: KeyVerdict?
        public var pin: PinVerdict
        public var negotiated: Bool
        public var unusable: UnusableKey?
        public var evidence: [String]
        public var weaknesses: [String]
        public var algorithms: NegotiatedAlgorithms?
        public var handshakeMilliseconds: Double?
        public var certificate: ScanReport.Certificate?
        public var firstSeen: String?
        public var lastSeen: String?
        /// Version 3: how many hosts of the document present it, when two or more do.
        public var sharedBy: Int?

        /// The one list of a key's field names, the writer's.
        typealias CodingKeys = ScanReport.Key.CodingKeys

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            type = try c.decode(String.self, forKey: .type)
            bits = try c.decodeIfPresent(Int.self, forKey: .bits) ?? 0
            fingerprint = try c.decodeIfPresent(String.self, forKey: .fingerprint)
            key = try c.decode(String.self, forKey: .key)
            verdict = try c.decode(KeyVerdict.self, forKey: .verdict)
            plainKeyVerdict = try c.decodeIfPresent(KeyVerdict.self, forKey: .plainKeyVerdict)
            pin = try c.decodeIfPresent(PinVerdict.self, forKey: .pin) ?? .unpinned
            negotiated = try c.decodeIfPresent(Bool.self, forKey: .negotiated) ?? false
            unusable = try c.decodeIfPresent(UnusableKey.self, forKey: .unusable)
            evidence = try c.decodeIfPresent([String].self, forKey: .evidence) ?? []
            weaknesses = try c.decodeIfPresent([String].self, forKey: .weaknesses) ?? []
            algorithms = try c.decodeIfPresent(NegotiatedAlgorithms.self, forKey: .algorithms)
            handshakeMilliseconds = try c.decodeIfPresent(Double.self, forKey: .handshakeMilliseconds)
            certificate = try c.decodeIfPresent(ScanReport.Certificate.self, forKey: .certificate)
            firstSeen = try c.decodeIfPresent(String.self, forKey: .firstSeen)
            lastSeen = try c.decodeIfPresent(String.self, forKey: .lastSeen)
            sharedBy = try c.decodeIfPresent(Int.self, forKey: .sharedBy)
        }
    }
}
