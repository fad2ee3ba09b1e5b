/// The words for a split view: which scanner proved which keys, for the reason sentence every
/// renderer shows and the dashboard's detail view.
extension JudgementWords {
    /// `scanner-b proved other keys for NAME: SHA256:… (this scan, by scanner-a: SHA256:…)`.
    static func splitView(_ judged: JudgedHost) -> String {
        let others = judged.splitView.map { "\($0.scanner) proved \($0.fingerprints.joined(separator: ", "))" }
        let own = Array(Set(judged.keys.compactMap { $0.key?.sha256Fingerprint })).sorted().joined(separator: ", ")
        let by = judged.probe.origin.map { " by \($0.scanner)" } ?? ""
        return "scanners disagree about \(judged.labels.name): " + others.joined(separator: "; ")
            + "; this probe\(by) proved \(own)"
    }

    /// The detail view's line for where a recorded probe comes from: `proved by scanner-a at TIME`.
    public static func origin(_ origin: ProbeOrigin) -> String {
        "proved by \(origin.scanner)" + (origin.scannedAt.map { " at \($0)" } ?? "")
    }

    /// One line per other scanner of a split view, for the detail view.
    public static func splitViewLines(_ judged: JudgedHost) -> [String] {
        judged.splitView.map { witness in
            "\(witness.scanner)" + (witness.scannedAt.map { " (\($0))" } ?? "") + " proved "
                + witness.fingerprints.joined(separator: ", ")
        }
    }
}
