import FleetTrustCore
import Glibc
import Synchronization

/// The trust engine's judgement (`FleetJudge`, the same path `fleettrust scan` takes) in the
/// dashboard's terms: status, per-key verdicts with the known_hosts lines behind them, the pin
/// answer, and what a trust or forget would touch.
///
/// The known_hosts and pin files are read again only when one of them changes on disk (after a
/// decision is saved), so discovering 10,000 hosts costs 10,000 lookups, not 10,000 reads.
public final class FleetJudgeAssessor: RowAssessor {
    public typealias Loader = @Sendable () throws -> FleetJudge

    private struct Loaded {
        var stamps: [FileStamp]
        var judge: FleetJudge
    }

    private let watched: [String]
    private let hosts: [InventoryHost]
    private let load: Loader
    private let loaded = Mutex<Loaded?>(nil)

    /// - Parameters:
    ///   - watched: the files `load` reads; a change to any of them reloads.
    ///   - hosts: the inventory, so hashed known_hosts lines are matched once for all of them.
    public init(watching watched: [String], hosts: [InventoryHost], load: @escaping Loader) {
        self.watched = watched
        self.hosts = hosts
        self.load = load
    }

    private func currentJudge() throws -> FleetJudge {
        try loaded.withLock { loaded in
            let stamps = watched.map(FileStamp.init(path:))
            if let loaded, loaded.stamps == stamps { return loaded.judge }
            let judge = try load().preparing(for: hosts)
            loaded = Loaded(stamps: stamps, judge: judge)
            return judge
        }
    }

    public func assess(_ host: InventoryHost, _ result: ProbeResult) -> RowAssessment {
        let judge: FleetJudge
        do { judge = try currentJudge() } catch {
            return RowAssessment(status: .error, evidence: ["cannot read the trust files: \(error)"])
        }
        guard let assessment = judge.assess(host, result) else { return .failed(result.failure) }
        let name = judge.knownHostsName(for: host)
        let knownHosts = judge.knownHosts
        let keys = result.keys.compactMap { discovered -> KeyAssessment? in
            guard let judged = assessment.keys.first(where: { $0.key == discovered.key }) else { return nil }
            let recorded = judged.judgement.evidence.filter { $0.role == .differentKey || $0.role == .addressDifferentKey }
                .map { RecordedLine(location: SourceLocation(file: $0.path, line: $0.line), fingerprint: $0.fingerprint,
                                    text: FleetJudgeAssessor.lineText(knownHosts, path: $0.path, line: $0.line)) }
            return KeyAssessment(key: discovered, knownHosts: judged.judgement.verdict, pin: assessment.pin.verdict,
                                 recorded: recorded, evidence: [judged.judgement.summary] + judged.judgement.evidence.map(\.sentence))
        }
        let recordedLines = knownHosts.entries(matching: name).filter { $0.entry.marker == nil }.map { match in
            RecordedLine(location: SourceLocation(file: match.path, line: match.line),
                         fingerprint: match.entry.key.fingerprint,
                         text: FleetJudgeAssessor.lineText(knownHosts, path: match.path, line: match.line))
        }
        var blocked: String?
        switch assessment.status {
        case .revoked:
            let revocation = assessment.keys.flatMap(\.judgement.evidence).first { $0.role == .revocation }
            blocked = "the key is revoked" + (revocation.map { " by @revoked at \($0.path):\($0.line)" } ?? "")
        case .pinMismatch:
            let pin = assessment.pin.evidence.first
            blocked = "no presented key matches the pins" + (pin.map { " (\($0.path):\($0.line))" } ?? "")
        default:
            blocked = nil
        }
        return RowAssessment(status: assessment.status, keys: keys, method: judge.report(host, result).method,
                             evidence: assessment.pin.evidence.map(\.sentence), knownHostsNames: [name],
                             knownHostsFile: knownHosts.files.first?.path ?? "", recordedLines: recordedLines,
                             trustBlockedReason: blocked,
                             negotiatedVerdict: assessment.keys.first { $0.key == assessment.negotiatedKey }?.judgement.verdict)
    }

    static func lineText(_ knownHosts: KnownHosts, path: String, line: Int) -> String {
        guard let file = knownHosts.files.first(where: { $0.path == path }),
              let found = file.lines.first(where: { $0.number == line }) else { return "" }
        return String(decoding: found.raw, as: UTF8.self)
    }
}

/// Identifies a file's content version cheaply (device, inode, size, modification time).
struct FileStamp: Equatable {
    var device: UInt64 = 0, inode: UInt64 = 0, size: Int64 = -1, seconds: Int = 0, nanoseconds: Int = 0

    init(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        seconds = info.st_mtim.tv_sec
        nanoseconds = info.st_mtim.tv_nsec
    }
}
