import Foundation

/// The scan as Prometheus metrics in the text exposition format, for node_exporter's textfile
/// collector: a rendering of each `JudgedHost`, as the JSON and the table are.
///
/// Every family has its `# HELP` and `# TYPE` lines and its samples together; no sample carries a
/// timestamp (the textfile collector refuses them); label values are escaped as the format says.
/// Every status is counted, zeros included, so an alert on `fleettrust_hosts{status="changed"} > 0`
/// has a series to look at before the first change. A host whose probe names its scanner (every
/// live scan; a replayed document that records `scanned_from`) carries a `scanner` label on
/// each of its series, so the same host proved from two networks is two series.
public struct PrometheusTextfile: Sendable {
    public var judged: [JudgedHost]
    /// How long the scan took (probing and judging), in seconds.
    public var durationSeconds: Double
    /// When the scan finished.
    public var finishedAt: Date
    /// Inventory entries left out for errors (the document's `skipped`).
    public var skippedEntries: Int
    /// The exit status the scan ends with.
    public var exitStatus: Int32

    public init(judged: [JudgedHost], durationSeconds: Double, finishedAt: Date, skippedEntries: Int, exitStatus: Int32) {
        self.judged = judged
        self.durationSeconds = durationSeconds
        self.finishedAt = finishedAt
        self.skippedEntries = skippedEntries
        self.exitStatus = exitStatus
    }

    public func rendered() -> String {
        var out = ""
        func family(_ name: String, _ help: String, _ samples: [(labels: [(String, String)], value: String)]) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n"
            for sample in samples {
                let labels = sample.labels.isEmpty ? ""
                    : "{" + sample.labels.map { "\($0.0)=\"\(Self.escaped($0.1))\"" }.joined(separator: ",") + "}"
                out += "\(name)\(labels) \(sample.value)\n"
            }
        }
        func host(_ judged: JudgedHost) -> [(String, String)] {
            [("name", judged.labels.name.value), ("endpoint", judged.labels.endpoint.value)]
                + (judged.probe.scanner.map { [("scanner", $0.value)] } ?? [])
        }
        family("fleettrust_host_status",
               "Each inventory host with its status as a label (value 1): "
                   + [0, 1, 2].map { JudgementWords.statuses(atLevel: $0) }.joined(separator: "; ") + ".",
               judged.map { (host($0) + [("status", $0.status.rawValue)], "1") })
        family("fleettrust_host_alarm_level",
               "How loud each host's status is: 0 \(JudgementWords.statuses(atLevel: 0)), 1 needs a look (\(JudgementWords.statuses(atLevel: 1))), "
                   + "2 alarm (\(JudgementWords.statuses(atLevel: 2))); a host presenting again a key it had replaced is 2.",
               judged.map { (host($0), String(ExitStatusRule.host($0))) })
        family("fleettrust_host_unfetched_key_types",
               "Key types each SSH host offers that the scan asked for and could not fetch (the JSON's unfetched_keys): above 0, its keys are not all the server's.",
               judged.filter { $0.endpointProtocol == .ssh }.map { (host($0), String($0.unfetched.count)) })
        let certificates = judged.flatMap { judged in
            judged.keys.compactMap { key -> (labels: [(String, String)], days: Int, validBefore: UInt64)? in
                guard let days = key.audit?.expiresInDays, let certificate = key.certificate else { return nil }
                return (host(judged) + [("type", key.typeName), ("fingerprint", key.key?.sha256Fingerprint ?? ""),
                                        ("ca", certificate.signatureKey.sha256Fingerprint)], days, certificate.validBefore)
            }
        }
        family("fleettrust_certificate_expires_in_days",
               "Whole days until each host certificate expires (negative once expired), as the scan JSON's expires_in_days; certificates that never expire have no sample.",
               certificates.map { ($0.labels, String($0.days)) })
        family("fleettrust_certificate_expiry_timestamp_seconds",
               "When each host certificate expires (its valid-before time), in seconds since the epoch.",
               certificates.map { ($0.labels, String($0.validBefore)) })
        var counts: [HostStatus: Int] = [:]
        for host in judged { counts[host.status, default: 0] += 1 }
        family("fleettrust_hosts", "Hosts per status in the last scan.",
               HostStatus.allCases.filter { $0 != .pending }.map { ([("status", $0.rawValue)], String(counts[$0] ?? 0)) })
        family("fleettrust_inventory_skipped_entries", "Inventory entries left out for errors (listed in the scan's JSON as skipped).",
               [([], String(skippedEntries))])
        family("fleettrust_scan_duration_seconds", "How long the last scan took, probing and judging.",
               [([], String(format: "%.3f", durationSeconds))])
        family("fleettrust_scan_finished_timestamp_seconds", "When the last scan finished, in seconds since the epoch.",
               [([], String(format: "%.3f", finishedAt.timeIntervalSince1970))])
        family("fleettrust_scan_exit_status", "The exit status of the last scan: 0 all trusted, 1 something to look at, 2 an alarm.",
               [([], String(exitStatus))])
        return out
    }

    /// Label values escape backslash, double quote and line feed.
    static func escaped(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }
}
