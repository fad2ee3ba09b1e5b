import Foundation

/// The words for where a probe comes from and for a split view: which scanner proved which
/// keys, for the reason sentence every renderer shows and the dashboard's detail view.
extension JudgementWords {
    /// `scanners disagree about NAME: scanner-b proved SHA256:…; this probe by scanner-a proved SHA256:…`;
    /// for rows of one scan, `one scan proved different keys for LOOKUP: row web1b proved SHA256:…; …`.
    static func splitView(_ judged: JudgedHost) -> String {
        let others = judged.splitView.map { ($0.row.map { "row \($0)" } ?? "\($0.scanner)") + " proved \(proved($0.fingerprints, $0.failure))" }
        let own = judged.tls?.leaf.map { [$0.pin] }
            ?? Array(Set(judged.keys.compactMap { $0.key?.sha256Fingerprint })).sorted()
        let by = judged.probe.scanner.map { " by \($0)" } ?? ""
        let head = judged.splitView.allSatisfy { $0.row != nil }
            ? "one scan proved different keys of one type for the known_hosts name \(CleanText(judged.lookup.hostString)) (keep neither until you know which server is real): "
            : "scanners disagree about \(judged.labels.name): "
        return head + others.joined(separator: "; ") + "; this probe\(by) proved \(proved(own, judged.failure?.asProbeFailure))"
    }

    /// Which scanner proved the probe's keys and when (`proved by scanner-a at TIME`), nil for a
    /// probe that names no scanner.
    public static func provenance(_ probe: ProbeResult) -> String? {
        guard let scanner = probe.scanner else { return nil }
        return "proved by \(scanner)" + (probe.finishedAt.map { " at " + HistoryTime.rfc3339(date: $0) } ?? "")
    }

    /// One line per other scanner of a split view, for the detail view.
    public static func splitViewLines(_ judged: JudgedHost) -> [String] {
        judged.splitView.map { witness in
            (witness.row.map { "row \($0) of this scan" } ?? "\(witness.scanner)") + (witness.scannedAt.map { " (" + HistoryTime.rfc3339(date: $0) + ")" } ?? "") + " proved "
                + proved(witness.fingerprints, witness.failure)
        }
    }

    /// `SHA256:…, SHA256:…` (a TLS endpoint's leaf key: `pin-sha256:…`), or `nothing (STAGE CODE: message)` for a view that proved no key.
    private static func proved(_ fingerprints: [String], _ failure: ProbeFailure?) -> String {
        guard fingerprints.isEmpty else { return fingerprints.joined(separator: ", ") }
        return "nothing" + (failure.map { " (\($0.stage.rawValue) \($0.code.rawValue): \($0.message))" } ?? "")
    }
}
