import Foundation

/// `fleettrust merge`: one scan document (version 3) from many reports, each host entry kept as
/// its scanner wrote it, with its `scanned_from`. Two passes over the files, so memory stays
/// bounded by the shared-keys table and a few words per entry, never by the documents: the
/// first checks every entry (strictly, as replay reads it) and builds the shared-keys table, the
/// split views and the summary; the second writes each entry as one line, its keys' `shared_by`
/// counted over the whole merged document. The summary is the one replay of the merged document
/// reaches before today's files judge it again: each entry's recorded status, `split-view` where
/// replay finds one, and the exit status by `ExitStatusRule`.
public struct ReportMerge {
    public let files: [String]

    public init(files: [String]) {
        self.files = files
    }

    /// What the first pass found.
    public struct Survey: Sendable {
        public var mergedFrom: [RecordedScan.MergedReport] = []
        public var sharedKeys = SharedKeyTable()
        public var splitViews: [SplitView] = []
        public var summary = ScanReport.Summary(total: 0, byStatus: [:], exitStatus: 0)
        public var skipped: [SkippedInventoryEntry] = []
        fileprivate var generatedAt: [String: String] = [:]
    }

    /// Reads every report once: refuses the first bad entry with its file and index.
    public func survey() throws -> Survey {
        var survey = Survey()
        var table = SharedKeyTable.Builder()
        var splits = SplitViewFinder()
        var recorded: [(status: HostStatus, drift: DriftKind?)] = []
        let decoder = JSONDecoder()
        // Which report each scanner's name came from: a name in two reports is refused, since a
        // report writing another scanner's name would take its entries out of the split views.
        var reportOf: [String: String] = [:]
        for file in files {
            var scanners: Set<String> = []
            var missingTime = false
            var count = 0
            let header = try ReportReader(path: file).read { index, data in
                let entry: RecordedScan.Host
                do {
                    entry = try decoder.decode(RecordedScan.Host.self, from: data)
                } catch {
                    throw MergeError(file: file, message: "not a fleettrust scan host entry (\(ScanReplay.describe(error, at: ".hosts[\(index)]")))")
                }
                if let scannedAt = entry.scannedAt, HistoryTime.date(rfc3339: scannedAt) == nil {
                    throw MergeError(file: file, message: "hosts[\(index)] (\(Sanitizer.clean(entry.name, limit: 80))): scanned_at is not an RFC 3339 UTC time")
                }
                missingTime = missingTime || entry.scannedAt == nil
                let scanner = entry.scannedFrom ?? "unknown"
                scanners.insert(scanner)
                if let named = entry.scannedFrom {
                    if let other = reportOf[named], other != file {
                        throw MergeError(file: file, message: "hosts[\(index)]: scanner \"\(Sanitizer.clean(named, limit: 255))\" also wrote \(Sanitizer.clean(other, limit: 1024)); "
                                         + "each scanner's name must come from one report (give each scanner its own --scanner-name)")
                    }
                    reportOf[named] = file
                }
                var fingerprints: [String] = []
                for key in entry.keys {
                    guard let fingerprint = Self.fingerprint(ofKey: key.key) else {
                        // A certificate this version cannot decode is replayed as such, and compared by nothing.
                        if Self.isCertificateBlob(key.key) { continue }
                        throw MergeError(file: file, message: "hosts[\(index)] (\(Sanitizer.clean(entry.name, limit: 80))): bad key")
                    }
                    fingerprints.append(fingerprint)
                    table.add(name: entry.name, fingerprint: fingerprint, type: Self.plainType(key.type))
                }
                // As replay reads the entry: a TLS endpoint by its leaf's key, read from the certificate itself.
                let leaf = entry.endpointProtocol == .tls ? entry.certificates?.first.flatMap { Base64.decode($0.der) } : nil
                let view = SplitViewKey.view(endpoint: entry.endpointProtocol, fingerprints: fingerprints, leaf: leaf, failure: entry.failure)
                splits.add(name: entry.name, host: entry.host, port: entry.port, hostKeyAlias: entry.ssh?.hostKeyAlias,
                           scanner: scanner, fingerprints: view.keys, gap: view.gap != nil)
                recorded.append((entry.status, entry.drift))
                count += 1
            }
            guard let version = header.version, RecordedScan.readableVersions.contains(version) else {
                throw MergeError(file: file, message: "scan document version \(header.version.map(String.init) ?? "(none)") is not supported (expected 1 to \(ScanReport.currentVersion))")
            }
            // An entry without its own time gets the report's (replay refuses a time it cannot read).
            if missingTime, let generatedAt = header.generatedAt, HistoryTime.date(rfc3339: generatedAt) == nil {
                throw MergeError(file: file, message: "generated_at is not an RFC 3339 UTC time")
            }
            survey.generatedAt[file] = header.generatedAt
            survey.skipped += header.skipped
            survey.mergedFrom.append(RecordedScan.MergedReport(scanner: scanners.count == 1 ? scanners.first! : scanners.sorted().joined(separator: ","),
                                                               generatedAt: header.generatedAt, hosts: count,
                                                               file: CleanText(file, limit: 1024).value))
        }
        survey.sharedKeys = table.table()
        survey.splitViews = splits.splitViews()
        let split = splits.splitEntries()
        for (index, entry) in recorded.enumerated() {
            // As the judge weighs the fact: only a revocation or a changed key is louder.
            let status = split.contains(index) && entry.status != .revoked && entry.status != .changed ? .splitView : entry.status
            survey.summary.total += 1
            survey.summary.byStatus[status.rawValue, default: 0] += 1
            if let drift = entry.drift { survey.summary.byDrift[drift.rawValue, default: 0] += 1 }
            survey.summary.exitStatus = max(survey.summary.exitStatus, ExitStatusRule.host(status: status, drift: entry.drift))
        }
        survey.summary.exitStatus = ExitStatusRule.run(hosts: survey.summary.exitStatus, skipped: !survey.skipped.isEmpty)
        return survey
    }

    /// Writes the merged document to `sink` (the second pass).
    public func write(_ survey: Survey, generatedAt: Date = Date(), to sink: (Data) throws -> Void) throws {
        let encoder = ScanDocumentLayout.encoder()
        let now = HistoryTime.rfc3339(date: generatedAt)
        try sink(try ScanDocumentLayout.head(generatedAt: now, encoder: encoder))
        var written = 0
        let decoder = JSONDecoder()
        for (file, report) in zip(files, survey.mergedFrom) {
            var count = 0
            _ = try ReportReader(path: file).read { index, data in
                guard case .object(var entry) = try decoder.decode(JSONValue.self, from: data) else {
                    throw MergeError(file: file, message: "hosts[\(index)]: not an object")
                }
                if entry["scanned_from"] == nil { entry["scanned_from"] = .string("unknown") }
                if entry["scanned_at"] == nil { entry["scanned_at"] = .string(survey.generatedAt[file] ?? now) }
                entry["shares_keys_with"] = nil
                if case .array(let keys) = entry["keys"] {
                    entry["keys"] = .array(keys.map { key in
                        guard case .object(var fields) = key else { return key }
                        if case .string(let line) = fields["key"] {
                            let fingerprint = Self.fingerprint(ofKey: line)
                            fields["fingerprint"] = fingerprint.map { .string($0) } ?? .null
                            fields["shared_by"] = fingerprint.flatMap { survey.sharedKeys.hosts(presenting: $0) }.map { .integer(Int64($0)) } ?? .null
                        }
                        return .object(fields)
                    })
                }
                try sink(ScanDocumentLayout.beforeHost(written) + (try encoder.encode(JSONValue.object(entry))))
                written += 1
                count += 1
            }
            guard count == report.hosts else { throw MergeError(file: file, message: "changed while it was merged") }
        }
        try sink(try ScanDocumentLayout.tail(hosts: written, fields: [
            ("known_hosts_files", try encoder.encode([String]())), ("merged_from", try encoder.encode(survey.mergedFrom)),
            ("pin_files", try encoder.encode([String]())), ("shared_keys", try encoder.encode(survey.sharedKeys.entries)),
            ("skipped", try encoder.encode(survey.skipped)), ("split_views", try encoder.encode(survey.splitViews)),
            ("summary", try encoder.encode(survey.summary)), ("version", try encoder.encode(ScanReport.currentVersion)),
        ]))
    }

    /// The fingerprint of a recorded key, made from the key itself as replay makes it (a
    /// certificate's is its certified key's): a report's own `fingerprint` field is a claim, and a
    /// forged one must neither hide a split view nor forge a shared key. Nil when it does not parse.
    static func fingerprint(ofKey line: String) -> String? {
        (try? HostKey(openSSHLine: line))?.sha256Fingerprint
    }

    /// A certificate's type and a base64 blob: what replay keeps as an undecodable certificate.
    static func isCertificateBlob(_ line: String) -> Bool {
        let fields = line.split(separator: " ")
        return fields.count == 2 && fields[0].hasSuffix("-cert-v01@openssh.com") && Base64.decode(fields[1]) != nil
    }

    /// The type of the key a certificate certifies (`ssh-ed25519` for `ssh-ed25519-cert-v01@openssh.com`).
    static func plainType(_ type: String) -> String {
        type.hasSuffix("-cert-v01@openssh.com") ? String(type.dropLast("-cert-v01@openssh.com".count)) : type
    }
}
