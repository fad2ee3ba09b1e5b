/// The `sshfp` object of a scan-document entry and the detail view's lines: what the host name's
/// SSHFP records say about the proved keys, in words; nothing decided here.
extension ScanReport {
    public struct SSHFPEntry: Codable, Sendable, Equatable {
        /// The name looked up (the one `ssh` connects to).
        public var name: String
        /// `VerifyHostKeyDNS`: `yes` or `ask`.
        public var mode: SSHFPMode
        /// Whether the resolver set the AD bit (DNSSEC validated, with `trust-ad`).
        public var validated: Bool
        /// For the key `ssh` meets: `validated-match`, `unvalidated-match`, `mismatch`, `none`.
        public var verdict: SSHFPFinding.Verdict
        /// The fingerprints of proved keys whose SSHFP records disagree (stale records).
        public var staleFingerprints: [String]
        /// One sentence for people.
        public var sentence: String

        enum CodingKeys: String, CodingKey {
            case name, mode, validated, verdict, sentence
            case staleFingerprints = "stale_fingerprints"
        }

        init(_ finding: SSHFPFinding, judged: JudgedHost) {
            name = CleanText(finding.name, limit: 300).value
            mode = finding.mode
            validated = finding.validated
            verdict = finding.verdict
            staleFingerprints = finding.stale.compactMap { judged.probe.keys.indices.contains($0) ? judged.probe.keys[$0].key.sha256Fingerprint : nil }
            sentence = JudgementWords.sshfp(judged).joined(separator: " ")
        }
    }
}

extension JudgementWords {
    /// What DNS says about the host's keys, one sentence per fact; empty when it was not asked.
    public static func sshfp(_ judged: JudgedHost) -> [String] {
        guard let finding = judged.sshfp else { return [] }
        let name = CleanText(finding.name, limit: 300)
        var lines: [String]
        switch finding.verdict {
        case .validatedMatch:
            lines = ["DNS: a validated SSHFP record for \(name) matches the key ssh meets"
                     + (finding.mode == .yes ? " (VerifyHostKeyDNS yes: ssh accepts it without known_hosts)." : " (VerifyHostKeyDNS ask: ssh still checks known_hosts).")]
        case .unvalidatedMatch:
            lines = ["DNS: an SSHFP record for \(name) matches the key ssh meets, but the answer is not DNSSEC-validated: ssh checks known_hosts."]
        case .mismatch:
            lines = ["DNS: the SSHFP records for \(name) do not match the key ssh meets: ssh warns and checks known_hosts."]
        case .none:
            lines = ["DNS: no SSHFP record for \(name) that ssh would use (\(CleanText(finding.why ?? "none", limit: 200)))."]
        }
        let stale = finding.stale.compactMap { judged.probe.keys.indices.contains($0) ? judged.probe.keys[$0].key.type : nil }
        if !stale.isEmpty {
            lines.append("Stale SSHFP records: DNS disagrees with the proved \(stale.joined(separator: ", ")) key\(stale.count == 1 ? "" : "s").")
        }
        return lines
    }
}
