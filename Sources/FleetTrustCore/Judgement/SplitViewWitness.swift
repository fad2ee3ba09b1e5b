import Foundation

/// What another scanner proved for the same host: the fact behind a `split-view` status.
///
/// When scanners in different networks probe one host (same name, same port) and prove
/// different keys, at least one network is not talking to the host it thinks it is (an
/// interception, a DNS or routing split, a twin behind NAT): no single report shows it, only
/// their comparison. Each entry of such a pair is judged `split-view` and names the others.
public struct SplitViewWitness: Hashable, Sendable {
    /// The other scanner.
    public let scanner: CleanText
    /// When it finished probing the host, when its report says.
    public let scannedAt: Date?
    /// The SHA-256 fingerprints it proved, sorted (a TLS endpoint: its leaf's `pin-sha256:…`);
    /// empty when it proved nothing.
    public let fingerprints: [String]
    /// Why it proved nothing though the server answered it (what `UnprovedKeyRule` calls a gap):
    /// from that network, `ssh` may meet another key.
    public let failure: ProbeFailure?
    /// Set when the other view is another inventory row of the same scan that `ssh` looks up
    /// under the same known_hosts name (`sameScan`): that row's inventory name.
    public let row: CleanText?

    public init(scanner: CleanText, scannedAt: Date?, fingerprints: [String], failure: ProbeFailure? = nil, row: CleanText? = nil) {
        self.scanner = scanner
        self.scannedAt = scannedAt
        self.fingerprints = fingerprints
        self.failure = failure
        self.row = row
    }
}

extension SplitViewWitness {
    /// Finds split views among recorded probes: a pure pass over the (host, probe) pairs of a
    /// replayed document, before judging, so the one judge can weigh the fact with the others.
    /// For each index whose probe disagrees with another scanner's about the same host, the
    /// other scanners' views. Entries of one host (`SplitViewKey`) disagree when they come from
    /// different scanners and one proved other keys than the other (a TLS endpoint: another leaf
    /// key), or proved nothing though the server answered it (a failure `ssh` does not share, or
    /// a failed STARTTLS upgrade or handshake: from that network the client may meet another
    /// key). A probe that reached nothing (unreachable from one network) is no other view
    /// (`SplitViewKey.view`).
    /// Also, within one scan, the rows `ssh` looks up under one name that proved different keys of
    /// one type (`sameScan`).
    public static func find(hosts: [InventoryHost], results: [ProbeResult]) -> [Int: [SplitViewWitness]] {
        var found = acrossScanners(hosts: hosts, results: results)
        let rows = results.indices.filter { hosts.indices.contains($0) }.map { (index: $0, host: hosts[$0], result: results[$0]) }
        for (index, witnesses) in sameScan(rows) {
            for witness in witnesses where !(found[index] ?? []).contains(witness) { found[index, default: []].append(witness) }
        }
        return found
    }

    private static func acrossScanners(hosts: [InventoryHost], results: [ProbeResult]) -> [Int: [SplitViewWitness]] {
        // A live scan (or one scanner's report) names one scanner for every probe: nothing to compare.
        let first = results.lazy.compactMap(\.scanner).first
        guard let first, results.contains(where: { $0.scanner != nil && $0.scanner != first }) else { return [:] }
        struct View { var index: Int, scanner: CleanText, scannedAt: Date?, fingerprints: [String], failure: ProbeFailure? }
        var groups: [SplitViewKey: [View]] = [:]
        for index in results.indices where hosts.indices.contains(index) {
            guard let scanner = results[index].scanner else { continue }
            // As `merge` compares them: a certificate by the key it certifies; an undecodable one not at all.
            let host = hosts[index], result = results[index]
            let (fingerprints, gap) = SplitViewKey.view(endpoint: host.endpointProtocol, fingerprints: result.keys.map(\.key.sha256Fingerprint),
                                                        leaf: result.tls?.chain.first, failure: result.failure)
            guard !fingerprints.isEmpty || gap != nil else { continue }
            let view = View(index: index, scanner: scanner, scannedAt: result.finishedAt, fingerprints: fingerprints, failure: gap)
            for key in SplitViewKey.keys(name: host.name, host: host.address, port: host.port, hostKeyAlias: host.hostKeyAlias) {
                groups[key, default: []].append(view)
            }
        }
        var found: [Int: [SplitViewWitness]] = [:]
        for group in groups.values where group.count > 1 {
            for view in group {
                let others = group.filter { SplitViewKey.disagree(($0.scanner.value, $0.fingerprints), (view.scanner.value, view.fingerprints)) }
                    .map { SplitViewWitness(scanner: $0.scanner, scannedAt: $0.scannedAt, fingerprints: $0.fingerprints, failure: $0.failure) }
                for witness in others where !(found[view.index] ?? []).contains(witness) { found[view.index, default: []].append(witness) }
            }
        }
        for index in found.keys {
            found[index]?.sort { ($0.scanner.value, $0.fingerprints.joined(separator: ",")) < ($1.scanner.value, $1.fingerprints.joined(separator: ",")) }
        }
        return found
    }
}
