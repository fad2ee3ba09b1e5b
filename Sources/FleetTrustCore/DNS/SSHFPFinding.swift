/// What a host's SSHFP records say about the keys it proved: the verdict `ssh`'s
/// `verify_host_key_dns` reaches for the key it meets (the only one that can change the status,
/// and only under `VerifyHostKeyDNS yes`), and the proved keys whose records disagree (a stale
/// record: a finding whatever the mode).
public struct SSHFPFinding: Hashable, Sendable {
    /// `dns.c`'s flags for one key, as four answers.
    public enum Verdict: String, Hashable, Sendable, Codable, CaseIterable {
        /// A record matches, none of the same kind disagrees, and the resolver set AD.
        case validatedMatch = "validated-match"
        /// A record matches, but the answer was not validated (no DNSSEC, or no `trust-ad`).
        case unvalidatedMatch = "unvalidated-match"
        /// Records exist and none matches (or one of the key's kind disagrees): `ssh` warns.
        case mismatch
        /// No record `ssh` would use.
        case none
    }

    /// The name looked up and the setting that asked for it.
    public var name: String
    public var mode: SSHFPMode
    public var validated: Bool
    /// For the key `ssh` meets; `none` when it met none this probe proved.
    public var verdict: Verdict
    /// Indices of proved keys that DNS records for their algorithm and that no record matches.
    public var stale: [Int]
    /// Why there was no record, as the lookup said.
    public var why: String?

    /// Judges the answer for `name` against the proved keys; `negotiated` is the index of the
    /// key `ssh` meets among them.
    public static func judge(_ answer: SSHFPAnswer, name: String, mode: SSHFPMode, keys: [HostKey], negotiated: Int?) -> SSHFPFinding {
        var why: String?
        if case .none(let reason) = answer { why = reason }
        let verdict = negotiated.map { keys.indices.contains($0) ? Self.verdict(keys[$0], answer) : .none } ?? .none
        let stale = keys.indices.filter { index in
            guard let algorithm = SSHFPRecord.algorithmNumber(keys[index].kind.plain),
                  answer.records.contains(where: { $0.algorithm == algorithm }) else { return false }
            return Self.verdict(keys[index], answer) == .mismatch
        }
        return SSHFPFinding(name: name, mode: mode, validated: answer.isValidated, verdict: verdict, stale: stale, why: why)
    }

    /// `verify_host_key_dns` for one (plain) key: a record of the key's algorithm whose digest of
    /// its type has the right length either matches or fails; one failure cancels every match.
    /// A record of a digest type `dns_read_key` cannot compute, or a key type SSHFP has no number
    /// for, makes the whole lookup an error in `ssh` (no flags): `none`.
    static func verdict(_ key: HostKey, _ answer: SSHFPAnswer) -> Verdict {
        guard case .records(let records, let validated) = answer,
              let algorithm = SSHFPRecord.algorithmNumber(key.kind.plain) else { return .none }
        let blob = key.fingerprintedBlob
        var matched = false
        var failed = false
        for record in records {
            let digest: [UInt8]
            switch record.digestType {
            case 1: digest = Digest.sha1(blob)
            case 2: digest = Digest.sha256(blob)
            default: return .none
            }
            guard record.algorithm == algorithm, record.digest.count == digest.count else { continue }
            if record.digest == digest { matched = true } else { failed = true }
        }
        guard matched, !failed else { return .mismatch }
        return validated ? .validatedMatch : .unvalidatedMatch
    }
}
