import Foundation

/// `--format sshfp`: DNS zone records for the keys something vouches for, as `ssh-keygen -r NAME`
/// prints them for a key file (SHA-1 then SHA-256 per key; a certificate stands for the key it
/// certifies, as `ssh` asks DNS about the plain key), under the name `ssh` would look up (the
/// `HostName` it connects to). A record published in DNS vouches for a key to every `ssh` that
/// reads it, so the gate is `--format known-hosts`'s: a trusted host's trusted or pinned keys; a
/// new host's pin-proved keys, and with `--trust-on-first-use` the key `ssh` meets
/// (`FirstUseKeys`); nothing for a host in alarm. Each host's records follow a comment naming it
/// and its status; a host left out, or whose name `ssh` never looks up (an address), is a comment
/// saying why.
struct SSHFPScanSink: ScanSink {
    let write: (Data) throws -> Void
    let trustOnFirstUse: Bool

    mutating func begin(_ run: ScanRunFacts) throws {}

    mutating func host(_ judged: JudgedHost) throws {
        guard judged.endpointProtocol == .ssh else { return }
        try write(Data(Self.lines(judged, trustOnFirstUse: trustOnFirstUse).map { $0 + "\n" }.joined().utf8))
    }

    mutating func finish(_ outcome: ScanOutcome) async throws {}

    /// The host's comment and records.
    static func lines(_ judged: JudgedHost, trustOnFirstUse: Bool) -> [String] {
        let heading = "; \(judged.labels.name) (\(judged.labels.endpoint)): \(judged.status.rawValue)"
        guard !judged.probe.keys.isEmpty else { return [heading + ", proved no key"] }
        let (keys, note) = vouched(judged, trustOnFirstUse: trustOnFirstUse)
        let notes = note.map { ["; " + $0] } ?? []
        guard !keys.isEmpty else { return [heading + ", no record: " + (note ?? "nothing vouches for its keys")] }
        guard let owner = SSHFPQuery.queryName(judged.host.address), zoneSafe(owner) else {
            return [heading + ", \(judged.labels.address) is not a name ssh looks SSHFP records up for"]
        }
        var seen = Set<SSHFPRecord>()
        let records = keys.flatMap(SSHFPRecord.records(for:)).filter { seen.insert($0).inserted }
        guard !records.isEmpty else { return [heading + ", proved only keys SSHFP has no algorithm number for"] + notes }
        return [heading] + records.map { $0.zoneLine(owner: owner) } + notes
    }

    /// The keys the records may vouch for, and a note on the proved keys left out (or, with no
    /// key, why none).
    static func vouched(_ judged: JudgedHost, trustOnFirstUse: Bool) -> (keys: [HostKey], note: String?) {
        switch judged.saving {
        case .save(let all):
            let choice = FirstUseKeys(judged, offered: all)
            let keys = trustOnFirstUse ? choice.saved : choice.provedByPin
            guard !keys.isEmpty else {
                return ([], trustOnFirstUse ? "new, and ssh would meet none of the keys it proved"
                            : "new, and no pin proves its keys (pin them, or pass --trust-on-first-use)")
            }
            return (keys, FirstUseKeys.note(all.filter { !keys.contains($0) }, firstUse: trustOnFirstUse))
        case .refused(.alreadyTrusted):
            let keys = judged.keys.filter { $0.isNegotiated || $0.verdict == .trusted || $0.verdict == .trustedByCA || $0.pin == .matched }.compactMap(\.key)
            let left = Set(judged.keys.compactMap(\.key)).subtracting(keys).count
            return (keys, left == 0 ? nil : "not printed: \(Counted.of(left, "proved key", "proved keys")) neither known_hosts nor a pin vouches for")
        case .refused, .replace:
            return ([], "\(judged.status.rawValue): \(JudgementWords.reason(judged))")
        }
    }

    /// A name that is one zone-file token: letters, digits, `-`, `_`, `.`, at most 253 bytes.
    static func zoneSafe(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 253 && name.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte)
                || byte == 0x2d || byte == 0x2e || byte == 0x5f
        }
    }
}
