import Foundation

/// Where a scan's judged hosts go: one type per output format, driven by `ScanRun` (the
/// printers of ripgrep are the model). A sink is told what the run is, then each judged host in
/// inventory order, then the outcome, which is final (the history is already recorded, the exit
/// status decided) before any sink finishes: what a sink prints about the outcome is always what
/// the process exits with. A new output format is one sink type and one `ScanFormat` case.
public protocol ScanSink {
    /// Before the first host.
    mutating func begin(_ run: ScanRunFacts) throws
    /// One judged host, in inventory order. A streaming sink writes it and lets it go.
    mutating func host(_ judged: JudgedHost) throws
    /// After the last host and after the outcome is final.
    mutating func finish(_ outcome: ScanOutcome) async throws
}

/// What a sink may need to know before the first host.
public struct ScanRunFacts: Sendable {
    public var generatedAt: Date
    public var knownHostsFiles: [String]
    public var pinFiles: [String]
    /// The keys hosts of several names present (the JSON document's `shared_keys`).
    public var sharedKeys: SharedKeyTable

    public init(generatedAt: Date = Date(), knownHostsFiles: [String], pinFiles: [String], sharedKeys: SharedKeyTable) {
        self.generatedAt = generatedAt
        self.knownHostsFiles = knownHostsFiles
        self.pinFiles = pinFiles
        self.sharedKeys = sharedKeys
    }
}

/// The one outcome of a scan: the counts, the skipped inventory entries, whether the history
/// recorded it, and the exit status made of all of them. Computed once, by `ScanRun`.
public struct ScanOutcome: Sendable, Equatable {
    /// Hosts per status and drift kind; its `exitStatus` is the process's.
    public var summary: ScanReport.Summary
    public var skipped: [SkippedInventoryEntry]
    /// Why the history could not record the scan (the exit status is then at least 1).
    public var recordProblem: String?
    /// Probing and judging, in seconds, and when the run ended.
    public var durationSeconds: Double
    public var finishedAt: Date

    public var exitStatus: Int32 { summary.exitStatus }

    public init(summary: ScanReport.Summary, skipped: [SkippedInventoryEntry], recordProblem: String?,
                durationSeconds: Double, finishedAt: Date) {
        self.summary = summary
        self.skipped = skipped
        self.recordProblem = recordProblem
        self.durationSeconds = durationSeconds
        self.finishedAt = finishedAt
    }
}

/// The output formats of `scan`, each made by its sink.
public enum ScanFormat: String, CaseIterable, Sendable {
    case table, json
    case knownHosts = "known-hosts"
    case prometheus
    case sshfp

    /// What the sinks are given besides the hosts: where to write, how the table meets its
    /// reader, whether known_hosts lines are hashed when a host does not say, and where
    /// warnings go.
    public struct Context {
        public var write: (Data) throws -> Void
        public var tableLayout: ScanTable.Layout
        public var hashesKnownHostsByDefault: () async -> Bool
        public var warn: (String) -> Void
        /// known-hosts: also print new hosts no pin proves, as `sync --trust-on-first-use` adds them.
        public var trustOnFirstUse: Bool

        public init(write: @escaping (Data) throws -> Void, tableLayout: ScanTable.Layout = ScanTable.Layout(),
                    hashesKnownHostsByDefault: @escaping () async -> Bool = { false }, warn: @escaping (String) -> Void = { _ in },
                    trustOnFirstUse: Bool = false) {
            self.write = write
            self.tableLayout = tableLayout
            self.hashesKnownHostsByDefault = hashesKnownHostsByDefault
            self.warn = warn
            self.trustOnFirstUse = trustOnFirstUse
        }
    }

    public func sink(_ context: Context) -> any ScanSink {
        switch self {
        case .table: TableScanSink(write: context.write, layout: context.tableLayout)
        case .json: JSONScanSink(write: context.write)
        case .knownHosts: KnownHostsScanSink(write: context.write, hashesByDefault: context.hashesKnownHostsByDefault, warn: context.warn,
                                             trustOnFirstUse: context.trustOnFirstUse)
        case .prometheus: PrometheusScanSink(write: context.write)
        case .sshfp: SSHFPScanSink(write: context.write, trustOnFirstUse: context.trustOnFirstUse)
        }
    }
}
