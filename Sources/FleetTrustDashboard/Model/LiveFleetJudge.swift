import FleetTrustCore
import Glibc
import Synchronization

/// How the dashboard gets its judgements: the one judge (`FleetJudge`), fed the hosts' probe results.
public protocol HostJudging: Sendable {
    /// Records the newest probe of host `index` and judges it; also judges again every other host
    /// whose list of hosts sharing a key with it changed. Returns each new judgement.
    func record(_ index: Int, _ result: ProbeResult) -> [(index: Int, judged: JudgedHost)]
    /// Judges host `index`'s latest probe again (after a write changed the trust files).
    func rejudge(_ index: Int) -> JudgedHost?
}

/// `FleetJudge`, the same path `fleettrust scan` takes, over the files as they are now: they are
/// read again only when one of them changes on disk (after a decision is saved), so discovering
/// 10,000 hosts costs 10,000 judgements, not 10,000 reads. It keeps every host's latest probe, so
/// it can count the hosts that present the same key, as `scan` does.
public final class LiveFleetJudge: HostJudging {
    public typealias Loader = @Sendable () throws -> FleetJudge

    private struct Loaded {
        var stamps: [FileStamp]
        var judge: FleetJudge
    }

    private struct Probes {
        var results: [ProbeResult?]
        /// Plain key blob -> hosts presenting it.
        var holders: [[UInt8]: [Int]] = [:]
        /// Rows of this run `ssh` looks up under one name that proved other keys of one type.
        var sameScan: [Int: [SplitViewWitness]] = [:]
    }

    private let watched: [String]
    private let hosts: [InventoryHost]
    /// Host names cleaned once, to count the hosts (by name) sharing a key.
    private let names: [CleanText]
    private let load: Loader
    /// Recorded probes only: the other scanners' views of each host that disagree with its own.
    private let splitViews: [Int: [SplitViewWitness]]
    /// Each host's rows looked up under the same known_hosts name (itself included), when it has any.
    private let siblings: [Int: [Int]]
    private let loaded = Mutex<Loaded?>(nil)
    private let probes: Mutex<Probes>

    /// - Parameters:
    ///   - watched: the files `load` reads; a change to any of them reloads.
    ///   - hosts: the inventory, so hashed known_hosts lines are matched once for all of them.
    public init(watching watched: [String], hosts: [InventoryHost], splitViews: [Int: [SplitViewWitness]] = [:],
                load: @escaping Loader) {
        self.splitViews = splitViews
        self.watched = watched
        self.hosts = hosts
        self.names = hosts.map { CleanText($0.name) }
        self.load = load
        self.probes = Mutex(Probes(results: Array(repeating: nil, count: hosts.count)))
        var byLookup: [String: [Int]] = [:]
        for (index, host) in hosts.enumerated() where host.endpointProtocol == .ssh {
            byLookup[LookupName(host: host.address, port: host.port, hostKeyAlias: host.hostKeyAlias).hostString, default: []].append(index)
        }
        var siblings: [Int: [Int]] = [:]
        for group in byLookup.values where group.count > 1 { for index in group { siblings[index] = group } }
        self.siblings = siblings
    }

    /// The judge over the files as they are now; throws when they cannot be read.
    public func currentJudge() throws -> FleetJudge {
        try loaded.withLock { loaded in
            let stamps = watched.map(FileStamp.init(path:))
            if let loaded, loaded.stamps == stamps { return loaded.judge }
            let judge = try load().preparing(for: hosts)
            loaded = Loaded(stamps: stamps, judge: judge)
            return judge
        }
    }

    public func record(_ index: Int, _ result: ProbeResult) -> [(index: Int, judged: JudgedHost)] {
        guard hosts.indices.contains(index) else { return [] }
        let affected: [Int] = probes.withLock { probes in
            var touched: Set<Int> = []
            for blob in Self.blobs(probes.results[index]) {
                probes.holders[blob]?.removeAll { $0 == index }
            }
            probes.results[index] = result
            for blob in Self.blobs(result) {
                let others = probes.holders[blob, default: []]
                touched.formUnion(others)
                probes.holders[blob] = others + [index]
            }
            // A second row under the same known_hosts name landed: judge the group's rows again.
            if let group = siblings[index] {
                let rows = group.compactMap { row in probes.results[row].map { (index: row, host: hosts[row], result: $0) } }
                let found = SplitViewWitness.sameScan(rows)
                for row in group where row != index { touched.insert(row) }
                for row in group { probes.sameScan[row] = found[row] }
            }
            return touched.sorted()
        }
        return ([index] + affected).compactMap { other in rejudge(other).map { (other, $0) } }
    }

    public func rejudge(_ index: Int) -> JudgedHost? {
        guard hosts.indices.contains(index) else { return nil }
        let (result, sharing, sameScan): (ProbeResult?, KeySharing, [SplitViewWitness]) = probes.withLock { probes in
            var counts: [String: Int] = [:]
            for key in Self.plainKeys(probes.results[index]) {
                let holders = Set((probes.holders[key.blob] ?? []).map { names[$0] })
                if holders.count > 1 { counts[key.sha256Fingerprint] = holders.count }
            }
            return (probes.results[index], KeySharing(hostsByFingerprint: counts), probes.sameScan[index] ?? [])
        }
        guard let result else { return nil }
        let recorded = splitViews[index] ?? []
        let splitView = recorded + sameScan.filter { !recorded.contains($0) }
        do {
            return try currentJudge().judge(hosts[index], result, keySharing: sharing, splitView: splitView)
        } catch {
            let unreadable = ProbeResult(host: result.host, port: result.port, peerAddress: result.peerAddress,
                                         failures: [ProbeFailure(stage: .hostKey, code: .other, message: "cannot read the trust files: \(error)")])
            return FleetJudge(knownHosts: KnownHosts(files: []), pins: nil).judge(hosts[index], unreadable)
        }
    }

    private static func blobs(_ result: ProbeResult?) -> Set<[UInt8]> {
        Set(plainKeys(result).map(\.blob))
    }

    private static func plainKeys(_ result: ProbeResult?) -> Set<HostKey> {
        Set(result?.keys.map { SharedKeys.plainKey(of: $0.key) } ?? [])
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
