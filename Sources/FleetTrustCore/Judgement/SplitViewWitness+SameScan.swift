/// One scan that proved two keys of one type for one known_hosts name: two inventory rows `ssh`
/// looks up under the same name (`SplitViewKey.lookup`: one endpoint under two names, or one
/// `HostKeyAlias`) whose probes met different servers, as a relay that sends each connection
/// elsewhere makes them. `ssh` would accept whichever key is saved, so neither may be: each row
/// is a split view naming the other.
extension SplitViewWitness {
    /// For each row (by its `index`) whose proved keys of some type differ from those of that type
    /// another row of the same scanner proved under the same lookup name, those other rows' views.
    /// Rows that proved keys of no common type, or no key at all, do not disagree.
    public static func sameScan(_ rows: [(index: Int, host: InventoryHost, result: ProbeResult)]) -> [Int: [SplitViewWitness]] {
        struct Row { var index: Int, name: String, result: ProbeResult }
        var groups: [[String]: [Row]] = [:]
        for row in rows where row.host.endpointProtocol == .ssh && !row.result.keys.isEmpty {
            let lookup = SplitViewKey.keys(name: row.host.name, host: row.host.address, port: row.host.port, hostKeyAlias: row.host.hostKeyAlias)
                .compactMap { key -> String? in if case .lookup(let name) = key { return name } else { return nil } }
            groups[[row.result.scanner?.value ?? ""] + lookup, default: []].append(Row(index: row.index, name: row.host.name, result: row.result))
        }
        var found: [Int: [SplitViewWitness]] = [:]
        // Most names are looked up by one row alone: only rows that share one have their keys fingerprinted.
        for group in groups.values where group.count > 1 {
            let byType = group.map { provedByType($0.result) }
            for (row, keys) in zip(group, byType) {
                for (other, otherKeys) in zip(group, byType) where other.index != row.index && disagree(keys, otherKeys) {
                    found[row.index, default: []].append(SplitViewWitness(
                        scanner: other.result.scanner ?? CleanText("this scan"), scannedAt: other.result.finishedAt,
                        fingerprints: Set(other.result.keys.map(\.key.sha256Fingerprint)).sorted(), row: CleanText(other.name)))
                }
            }
        }
        return found
    }

    /// The fingerprints a probe proved, by key type (a certificate as the key it certifies).
    private static func provedByType(_ result: ProbeResult) -> [String: Set<String>] {
        var byType: [String: Set<String>] = [:]
        for proved in result.keys {
            let plain = SharedKeys.plainKey(of: proved.key)
            byType[plain.type, default: []].insert(plain.sha256Fingerprint)
        }
        return byType
    }

    /// Some key type both rows proved, with different keys of it.
    private static func disagree(_ one: [String: Set<String>], _ other: [String: Set<String>]) -> Bool {
        one.contains { type, keys in other[type].map { $0 != keys } ?? false }
    }
}
