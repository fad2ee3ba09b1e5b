/// The promise of `tidy --fix`, that a fix never changes what `ssh` decides, kept by
/// construction: before anything is written, every host the removed lines can match (each
/// inventory host, and every name a line of the files records) is judged with the files as they
/// are and as they would be, by the same judge as scan (`KnownHostsJudge`), for the keys that
/// matter: the keys the host presented at its last scan when the history knows them, else
/// every key recorded for it. A removal that changes any of those verdicts is not made; the lines
/// it concerns are kept, each with the host and the change it would have caused.
///
/// A pattern line (wildcards, a negated list, an address range) may match hosts no file and no
/// inventory names, whom no judgement here can see; so it is removed only as an exact duplicate
/// or as a line `ssh` cannot read, never for another name's sake.
public struct TidyDecisionGuard: Sendable {
    public let files: [KnownHostsFile]
    /// The inventory's hosts as `ssh` connects to them.
    public let hosts: [ConnectionTarget]
    /// Fingerprints each host presented at its last scan, by its lookup string (`LookupName.hostString`).
    public let presented: [String: Set<String>]

    public init(files: [KnownHostsFile], hosts: [InventoryHost] = [], presented: [String: Set<String>] = [:]) {
        self.files = files
        self.hosts = hosts.filter { $0.endpointProtocol == .ssh }.map { ConnectionTarget(host: $0.address, port: $0.port, hostKeyAlias: $0.hostKeyAlias) }
        self.presented = presented
    }

    /// The fingerprints each host presented at its last complete scan, by its lookup string.
    public static func presentedKeys(of hosts: [InventoryHost], history: FleetHistory) -> [String: Set<String>] {
        var presented: [String: Set<String>] = [:]
        for host in hosts where host.endpointProtocol == .ssh {
            let lookup = host.historyKey
            guard let last = history.hosts[lookup], last.latestComplete, !last.latest.isEmpty else { continue }
            presented[lookup, default: []].formUnion(last.latest.map(\.fingerprint))
        }
        return presented
    }

    /// `chosen` split into the findings whose lines can go and those kept, each kept one with why.
    public func check(_ chosen: [TidyFinding]) -> (remove: [TidyFinding], kept: [(finding: TidyFinding, why: String)]) {
        var kept: [TidyLocation: String] = [:]
        for finding in chosen where finding.kind != .duplicate && finding.kind != .unmatchable && isPattern(finding.location) {
            kept[finding.location] = "a pattern line, which may match hosts nothing here names: never removed for another name's sake"
        }
        while true {
            let removing = Set(chosen.map(\.location)).subtracting(kept.keys)
            let changes = decisionChanges(removing: removing)
            if changes.isEmpty { break }
            for (location, why) in changes where kept[location] == nil { kept[location] = why }
        }
        return (chosen.filter { kept[$0.location] == nil }, chosen.compactMap { finding in kept[finding.location].map { (finding, $0) } })
    }

    private func isPattern(_ location: TidyLocation) -> Bool {
        guard case .patterns(let list)? = entry(at: location)?.hosts else { return false }
        return list.literalNames == nil
    }

    /// For each removed line whose removal changes a verdict: the host, key and change.
    private func decisionChanges(removing: Set<TidyLocation>) -> [TidyLocation: String] {
        guard !removing.isEmpty else { return [:] }
        let after = files.map { file -> KnownHostsFile in
            let lines = Set(removing.filter { $0.path == file.path }.map(\.line))
            guard !lines.isEmpty, let bytes = try? TidyFix(file: file).rendered(removing: lines) else { return file }
            return KnownHostsFile(path: file.path, bytes: bytes)
        }
        let before = KnownHosts(files: files)
        let judgeBefore = KnownHostsJudge(knownHosts: before), judgeAfter = KnownHostsJudge(knownHosts: KnownHosts(files: after))
        let removed = removing.compactMap(entry(at:))
        var changes: [TidyLocation: String] = [:]
        for target in targets() where Self.canMatch(target.lookup, removed) {
            let lookup = target.lookup
            let matches = ([lookup.hostString] + (lookup.retryString.map { [$0] } ?? [])).flatMap { before.entries(matching: $0) }
            let touched = matches.map { TidyLocation(path: $0.path, line: $0.line, fileIndex: 0) }.filter(removing.contains)
            guard !touched.isEmpty else { continue }
            var keys = matches.filter { $0.entry.marker != .certAuthority }.compactMap(\.entry.key.hostKey)
            if let proved = presented[lookup.hostString] { keys = keys.filter { proved.contains($0.sha256Fingerprint) } }
            var seen = Set<String>()
            for key in keys where seen.insert(key.sha256Fingerprint).inserted {
                let was = judgeBefore.judge(key, for: target).verdict, becomes = judgeAfter.judge(key, for: target).verdict
                guard was != becomes else { continue }
                let why = "removing it would change what ssh decides for \(lookup.hostString) presenting "
                    + "\(key.type) \(key.sha256Fingerprint): \(was.rawValue) today, \(becomes.rawValue) after"
                for location in touched where changes[location] == nil { changes[location] = why }
            }
        }
        return changes
    }

    /// The inventory's hosts, and every literal name the files record (as `ssh` would look it up).
    private func targets() -> [ConnectionTarget] {
        var targets = hosts
        var seen = Set(hosts)
        for file in files {
            for line in file.lines {
                guard case .patterns(let list)? = line.entry?.hosts, let names = list.literalNames else { continue }
                for name in names {
                    let target = Self.target(String(decoding: name, as: UTF8.self))
                    if seen.insert(target).inserted { targets.append(target) }
                }
            }
        }
        return targets
    }

    private func entry(at location: TidyLocation) -> KnownHostsEntry? {
        guard let file = files.first(where: { $0.path == location.path }), location.line >= 1, location.line <= file.lines.count else {
            return nil
        }
        return file.lines[location.line - 1].entry
    }

    /// Whether any of `entries` can match the lookup or its bare-name retry: a cheap first pass,
    /// so only those hosts are judged.
    static func canMatch(_ lookup: LookupName, _ entries: [KnownHostsEntry]) -> Bool {
        let names = [lookup.hostString] + (lookup.retryString.map { [$0] } ?? [])
        return entries.contains { entry in
            names.contains { name in
                let lowered = KnownHostsPattern.lowercased(Array(name.utf8))
                switch entry.hosts {
                case .hashed(let hashed): return hashed.matches(lowered)
                case .patterns(let list): return list.match(lowered) != .noMatch || list.match(lowered, cidr: true) != .noMatch
                }
            }
        }
    }

    /// `[host]:port` or `host` (port 22), as a connection target.
    static func target(_ name: String) -> ConnectionTarget {
        if name.hasPrefix("["), let close = name.lastIndex(of: "]"), name[close...].hasPrefix("]:"),
           let port = Int(name[name.index(close, offsetBy: 2)...]) {
            return ConnectionTarget(host: String(name[name.index(after: name.startIndex)..<close]), port: port)
        }
        return ConnectionTarget(host: name)
    }
}
