/// Hosts two scanners saw differently: entries with the same name and port, proved from different
/// scanners (`scanned_from`), whose proved key sets (by fingerprint) differ, or where one scanner
/// proved keys and another proved nothing though the server answered it (or ended `unverified`). One network seeing
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

/// Collects, entry by entry, what each scanner proved for each name and port (a 64-bit digest of
/// the sorted fingerprints, not the fingerprints: 100,000 hosts stay small).
struct SplitViewFinder {
    private struct Endpoint: Hashable {
        var name: String
        var port: Int
    }

    private struct Sighting: Hashable {
        var scanner: String
        /// The digest of the fingerprints; 0 for a scanner that proved nothing where the server answered.
        var keys: UInt64
    }

    private var byEndpoint: [Endpoint: [Sighting]] = [:]

    /// An entry of `name`:`port` proved `fingerprints` from `scanner`; `unproved`: it proved nothing
    /// (or not the key `ssh` meets) though the server answered. An entry that reached nothing is no view.
    mutating func add(name: String, port: Int, scanner: String, fingerprints: [String], unproved: Bool = false) {
        guard !fingerprints.isEmpty || unproved else { return }
        let endpoint = Endpoint(name: name, port: port)
        let sighting = Sighting(scanner: scanner, keys: unproved ? 0 : Self.digest(fingerprints.sorted()))
        if var sightings = byEndpoint[endpoint] {
            guard !sightings.contains(sighting) else { return }
            byEndpoint[endpoint] = nil
            sightings.append(sighting)
            byEndpoint[endpoint] = sightings
        } else {
            byEndpoint[endpoint] = [sighting]
        }
    }

    /// Every endpoint whose scanners disagree, sorted by name and port.
    func splitViews() -> [SplitView] {
        byEndpoint.compactMap { endpoint, sightings -> SplitView? in
            let disagree = sightings.contains { one in
                one.keys != 0 && sightings.contains { $0.scanner != one.scanner && $0.keys != one.keys }
            }
            guard disagree else { return nil }
            return SplitView(name: endpoint.name, port: endpoint.port, scanners: Set(sightings.map(\.scanner)).sorted())
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
