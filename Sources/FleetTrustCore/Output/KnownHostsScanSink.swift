import Foundation

/// `--format known-hosts`: lines ready to append, under the same gate as `sync` (`SyncPlan`): a
/// host the judgement offers for saving is printed only when a pin or a pinned CA proves its keys,
/// or with `--trust-on-first-use`; the others are named on stderr with why. Each host's lines
/// follow a comment naming it and its proof, so a person reading the lines before appending them
/// sees whose keys they are. Lines are hashed as the host's own `HashKnownHosts` says, else as
/// `hashesByDefault` (asked only when some host does not say: it may run `ssh -G`); a hashed
/// host's comment leaves its name out, which hashing exists to hide.
struct KnownHostsScanSink: ScanSink {
    let write: (Data) throws -> Void
    let hashesByDefault: () async -> Bool
    let warn: (String) -> Void
    let trustOnFirstUse: Bool
    private var saving: [(host: JudgedHost, keys: [HostKey], proof: SyncPlan.Proof)] = []

    init(write: @escaping (Data) throws -> Void, hashesByDefault: @escaping () async -> Bool, warn: @escaping (String) -> Void,
         trustOnFirstUse: Bool) {
        self.write = write
        self.hashesByDefault = hashesByDefault
        self.warn = warn
        self.trustOnFirstUse = trustOnFirstUse
    }

    mutating func begin(_ run: ScanRunFacts) throws {}

    mutating func host(_ judged: JudgedHost) throws {
        guard case .save = judged.saving else { return }
        switch SyncPlan.action(for: judged, trustOnFirstUse: trustOnFirstUse) {
        case .add(let keys, _, let proof, let withheld):
            saving.append((judged, keys, proof))
            if let note = FirstUseKeys.note(withheld, firstUse: proof == .trustOnFirstUse) { warn("\(judged.labels.name): \(note)") }
        case .notAdded(let why): warn("\(judged.labels.name): not printed: \(why)")
        case .alreadyTrusted, .refused: return
        }
    }

    mutating func finish(_ outcome: ScanOutcome) async throws {
        let asks = saving.contains { $0.host.host.sshOptions.hashKnownHosts == nil }
        let hashedByDefault = asks ? await hashesByDefault() : false
        var lines: [String] = []
        for (host, keys, proof) in saving {
            let hashed = host.host.sshOptions.hashKnownHosts ?? hashedByDefault
            do {
                let rendered = try keys.flatMap { try KnownHostsLines.render($0, names: host.saveNames, hashed: hashed) }
                let whose = hashed ? "a host whose name is hashed" : "\(host.labels.name) (\(host.labels.endpoint))"
                lines.append("# \(whose): proved by \(proof.rawValue)")
                lines += rendered
            } catch {
                warn("\(host.labels.name): \(error)")
            }
        }
        try write(Data(lines.map { $0 + "\n" }.joined().utf8))
    }
}
