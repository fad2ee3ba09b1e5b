/// Hosts two scanners saw differently: entries of one host (`SplitViewKey`) proved from different
/// scanners (`scanned_from`) whose proved key sets (by fingerprint; a TLS endpoint's by its leaf
/// key) differ, or where one scanner proved keys and another proved nothing though the server
/// answered it (`SplitViewKey.view`). One network seeing
/// another key for a host is the sign of an attacker in that network (or a DNS split, or a stale
/// clone): `merge` reports it and the merged document lists it for replay to judge.
public struct SplitView: Codable, Sendable, Equatable {
    public var name: String
    public var port: Int
    /// Every scanner that proved keys for the host, sorted.
    public var scanners: [String]

    public init(name: String, port: Int, scanners: [String]) {
        self.name = name
        self.port = port
        self.scanners = scanners
    }
}

/// Collects, entry by entry, what each scanner proved for each host (a 64-bit digest of the
/// sorted fingerprints, not the fingerprints: 100,000 entries stay small), grouped by
/// `SplitViewKey`, and answers which entries are in a split view and which hosts are.
struct SplitViewFinder {
    private struct Sighting {
        var name: String
        var port: Int
        var scanner: String
        /// The digest of the fingerprints; 0 for a scanner that proved nothing where the server answered.
        var keys: UInt64
    }

    /// Every entry's sighting in the order added; nil for an entry that reached nothing.
    private var sightings: [Sighting?] = []
    private var groups: [SplitViewKey: [Int]] = [:]

    /// The next entry, of `name` (looked up as `host`, or its `hostKeyAlias`) and `port`, proved
    /// `fingerprints` from `scanner`; `gap`: it proved nothing though the server answered. An
    /// entry that reached nothing is no view.
    mutating func add(name: String, host: String? = nil, port: Int, hostKeyAlias: String? = nil,
                      scanner: String, fingerprints: [String], gap: Bool = false) {
        guard !fingerprints.isEmpty || gap else {
            sightings.append(nil)
            return
        }
        let index = sightings.count
        sightings.append(Sighting(name: name, port: port, scanner: scanner, keys: fingerprints.isEmpty ? 0 : Self.digest(Set(fingerprints).sorted())))
        for key in SplitViewKey.keys(name: name, host: host ?? name, port: port, hostKeyAlias: hostKeyAlias) {
            groups[key, default: []].append(index)
        }
    }

    /// The entries (by the order they were added) another scanner saw otherwise.
    func splitEntries() -> Set<Int> {
        var split: Set<Int> = []
        for members in groups.values where members.count > 1 {
            for one in members where !split.contains(one) {
                let view = sightings[one]!
                if members.contains(where: { SplitViewKey.disagree((view.scanner, view.keys), (sightings[$0]!.scanner, sightings[$0]!.keys)) }) {
                    split.insert(one)
                }
            }
        }
        return split
    }

    /// Every host (name and port) with an entry in a split view, with every scanner that saw it
    /// under any of its keys, sorted by name and port.
    func splitViews() -> [SplitView] {
        let split = splitEntries()
        var scanners: [SplitViewKey: Set<String>] = [:]
        for members in groups.values where members.contains(where: split.contains) {
            for one in members where split.contains(one) {
                let view = sightings[one]!
                scanners[.inventory(name: view.name, port: view.port), default: []].formUnion(members.map { sightings[$0]!.scanner })
            }
        }
        return scanners.compactMap { key, scanners -> SplitView? in
            guard case .inventory(let name, let port) = key else { return nil }
            return SplitView(name: name, port: port, scanners: scanners.sorted())
        }.sorted { ($0.name, $0.port) < ($1.name, $1.port) }
    }

    /// FNV-1a over the fingerprints, each ended by a line break.
    private static func digest(_ fingerprints: [String]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for fingerprint in fingerprints {
            for byte in fingerprint.utf8 + [0x0a] {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
        }
        return hash
    }
}
