import Foundation

/// `--format sshfp`: DNS zone records for the keys each host proved, as `ssh-keygen -r NAME`
/// prints them for a key file (SHA-1 then SHA-256 per key; a certificate stands for the key it
/// certifies, as `ssh` asks DNS about the plain key), under the name `ssh` would look up (the
/// `HostName` it connects to). Each host's records follow a comment naming it and its status, so
/// a person pasting them into a zone sees whose keys they are and whether they were trusted; a
/// host that proved no key, or whose name `ssh` never looks up (an address), is a comment only.
struct SSHFPScanSink: ScanSink {
    let write: (Data) throws -> Void

    mutating func begin(_ run: ScanRunFacts) throws {}

    mutating func host(_ judged: JudgedHost) throws {
        guard judged.endpointProtocol == .ssh else { return }
        try write(Data(Self.lines(judged).map { $0 + "\n" }.joined().utf8))
    }

    mutating func finish(_ outcome: ScanOutcome) async throws {}

    /// The host's comment and records.
    static func lines(_ judged: JudgedHost) -> [String] {
        let heading = "; \(judged.labels.name) (\(judged.labels.endpoint)): \(judged.status.rawValue)"
        let keys = judged.probe.keys.map(\.key)
        guard !keys.isEmpty else { return [heading + ", proved no key"] }
        guard let owner = SSHFPQuery.queryName(judged.host.address), zoneSafe(owner) else {
            return [heading + ", \(judged.labels.address) is not a name ssh looks SSHFP records up for"]
        }
        var seen = Set<SSHFPRecord>()
        let records = keys.flatMap(SSHFPRecord.records(for:)).filter { seen.insert($0).inserted }
        guard !records.isEmpty else { return [heading + ", proved only keys SSHFP has no algorithm number for"] }
        return [heading] + records.map { $0.zoneLine(owner: owner) }
    }

    /// A name that is one zone-file token: letters, digits, `-`, `_`, `.`, at most 253 bytes.
    static func zoneSafe(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 253 && name.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte)
                || byte == 0x2d || byte == 0x2e || byte == 0x5f
        }
    }
}
