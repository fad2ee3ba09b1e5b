import Foundation

/// `--format known-hosts`: lines ready to append for the hosts the judgement offers for saving
/// (`JudgedHost.saving`), hashed as the host's own `HashKnownHosts` says, else as
/// `hashesByDefault` (asked only when some host does not say: it may run `ssh -G`).
struct KnownHostsScanSink: ScanSink {
    let write: (Data) throws -> Void
    let hashesByDefault: () async -> Bool
    let warn: (String) -> Void
    private var saving: [(host: JudgedHost, keys: [HostKey])] = []

    init(write: @escaping (Data) throws -> Void, hashesByDefault: @escaping () async -> Bool, warn: @escaping (String) -> Void) {
        self.write = write
        self.hashesByDefault = hashesByDefault
        self.warn = warn
    }

    mutating func begin(_ run: ScanRunFacts) throws {}

    mutating func host(_ judged: JudgedHost) throws {
        if case .save(let keys) = judged.saving { saving.append((judged, keys)) }
    }

    mutating func finish(_ outcome: ScanOutcome) async throws {
        let asks = saving.contains { $0.host.host.sshOptions.hashKnownHosts == nil }
        let hashedByDefault = asks ? await hashesByDefault() : false
        var lines: [String] = []
        for (host, keys) in saving {
            do {
                for key in keys {
                    lines += try KnownHostsLines.render(key, names: host.saveNames,
                                                        hashed: host.host.sshOptions.hashKnownHosts ?? hashedByDefault)
                }
            } catch {
                warn("\(host.labels.name): \(error)")
            }
        }
        try write(Data(lines.map { $0 + "\n" }.joined().utf8))
    }
}
