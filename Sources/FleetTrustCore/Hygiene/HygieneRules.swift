/// The rules behind each kind of finding, one function each (see `TidyFindingKind`).
extension KnownHostsHygiene {
    /// Lines `ssh` ignores, and valid lines no lookup string can ever equal: a hashed field
    /// that is not OpenSSH's own encoding, a pattern list with no positive non-empty element.
    func unmatchable(_ line: Line) -> [TidyFinding] {
        switch line.content {
        case .comment:
            return []
        case .invalid(let reason):
            return [finding(line, .unmatchable, reason: reason)]
        case .entry(let entry):
            switch entry.hosts {
            case .hashed(let hashed) where hashed.expected == nil:
                return [finding(line, .unmatchable, reason: "the hash is not a 20-byte HMAC in OpenSSH's encoding")]
            case .patterns(let list) where !list.canMatch:
                return [finding(line, .unmatchable, reason: "the host field has no name that can match")]
            default:
                return []
            }
        }
    }

    /// A line whose every name is matched by another line with the same marker and key. Of two
    /// lines that cover each other, the later is reported; lines whose names are not known
    /// (wildcards, unresolved hashes) are duplicates only of a line with the same host field.
    func duplicates(_ context: Context, order: [TidyLocation]) -> [TidyFinding] {
        var findings: [TidyFinding] = []
        var byField: [String: TidyLocation] = [:]
        for location in order {
            guard let line = context.lines[location], let entry = line.entry else { continue }
            let same = { (other: TidyLocation) -> Bool in
                guard other != location, let candidate = context.lines[other]?.entry else { return false }
                return candidate.marker == entry.marker && candidate.key == entry.key
            }
            if let names = context.exactNames(location), !names.isEmpty {
                var covering = Set(context.matching[names.first!, default: []].filter(same))
                for name in names.dropFirst() { covering.formIntersection(context.matching[name, default: []]) }
                let reported = covering.filter { other in
                    guard let otherNames = context.exactNames(other), otherNames == names else { return true }
                    return other < location
                }
                if let first = reported.min() { findings.append(finding(line, .duplicate, names: Array(names), related: [first])) }
            } else {
                let key = "\(entry.marker.map { "\($0)" } ?? "")|\(entry.key)|\(String(decoding: KnownHostsPattern.lowercased(line.hostField), as: UTF8.self))"
                if let first = byField[key] {
                    findings.append(finding(line, .duplicate, related: [first]))
                } else {
                    byField[key] = location
                }
            }
        }
        return findings
    }

    /// Names with two different unmarked keys of one type: each such line, with the others.
    func conflicts(_ context: Context) -> [TidyFinding] {
        var perLine: [TidyLocation: (names: Set<String>, related: Set<TidyLocation>, type: String)] = [:]
        for (name, locations) in context.matching {
            var byType: [String: [(TidyLocation, RecordedKey)]] = [:]
            for location in locations {
                guard let entry = context.lines[location]?.entry, entry.marker == nil else { continue }
                byType[entry.key.typeName, default: []].append((location, entry.key))
            }
            for (type, recorded) in byType where Set(recorded.map(\.1)).count > 1 {
                for (location, key) in recorded {
                    let others = recorded.filter { $0.1 != key }.map(\.0)
                    var item = perLine[location] ?? ([], [], type)
                    item.names.insert(name)
                    item.related.formUnion(others)
                    perLine[location] = item
                }
            }
        }
        return perLine.map { location, item in
            finding(context.lines[location]!, .conflicting, names: Array(item.names), related: Array(item.related), keyType: item.type)
        }
    }

    /// Unmarked lines whose key a `@revoked` line matching the same name revokes. Such a line is
    /// only reported when it is, in its file, the last unmarked line of a name: without it a
    /// different key would be `new` where `ssh` calls it changed, so `--fix` would refuse it anyway.
    func revokedRecorded(_ context: Context) -> [TidyFinding] {
        var perLine: [TidyLocation: (names: Set<String>, related: Set<TidyLocation>)] = [:]
        for (name, locations) in context.matching {
            let revoked = locations.compactMap { location -> (TidyLocation, RecordedKey)? in
                guard let entry = context.lines[location]?.entry, entry.marker == .revoked else { return nil }
                return (location, entry.publicKey)
            }
            guard !revoked.isEmpty else { continue }
            for location in locations {
                guard let entry = context.lines[location]?.entry, entry.marker == nil else { continue }
                let revoking = revoked.filter { $0.1 == entry.publicKey }.map(\.0)
                guard !revoking.isEmpty else { continue }
                var item = perLine[location] ?? ([], [])
                item.names.insert(name)
                item.related.formUnion(revoking)
                perLine[location] = item
            }
        }
        let lastOfAName = Set(perLine.keys.filter { location in
            perLine[location]!.names.contains { name in
                (context.matching[name] ?? []).allSatisfy { other in
                    other.path != location.path || context.lines[other]?.entry?.marker != nil || perLine[other] != nil
                }
            }
        })
        return perLine.map {
            finding(context.lines[$0.key]!, .revokedRecorded, names: Array($0.value.names), related: Array($0.value.related),
                    removable: !lastOfAName.contains($0.key))
        }
    }

    /// Unmarked plain or hashed lines none of whose names an inventory host uses. Wildcard
    /// lines are someone's deliberate pattern and are left alone.
    func unknownHosts(_ context: Context, order: [TidyLocation], used: Set<String>, hosts: [HygieneHost]) -> [TidyFinding] {
        order.compactMap { location -> TidyFinding? in
            guard let line = context.lines[location], let entry = line.entry, entry.marker == nil else { return nil }
            switch entry.hosts {
            case .patterns:
                guard let names = context.literal[location], !names.isEmpty, names.isDisjoint(with: used) else { return nil }
                return finding(line, .unknownHost, names: Array(names))
            case .hashed:
                let names = context.resolved[location] ?? []
                guard names.isDisjoint(with: used) else { return nil }
                return finding(line, .unknownHost, names: Array(names))
            }
        }
    }

    /// Unmarked lines for a host (its lookup string, or the bare retry when that records
    /// nothing, as `ssh` looks up) whose key type the host did not present at its last scan.
    func unusedKeyTypes(_ context: Context) -> [TidyFinding] {
        var findings: [TidyFinding] = []
        for (host, presented) in presentedKeyTypes {
            let lookup = String(decoding: KnownHostsPattern.lowercased(Array(host.utf8)), as: UTF8.self)
            for location in context.matching[lookup, default: []] {
                guard let entry = context.lines[location]?.entry, entry.marker == nil, !presented.contains(entry.key.typeName) else { continue }
                findings.append(finding(context.lines[location]!, .unusedKeyType, names: [lookup], keyType: entry.key.typeName))
            }
        }
        return findings
    }

    /// One key recorded for names of unrelated hosts. Names are related when one line lists
    /// them together, when they are one host with and without a port, or when one inventory
    /// host uses them.
    func sharedKeys(_ context: Context, order: [TidyLocation]) -> [TidyFinding] {
        var groups = NameGroups()
        for host in inventory ?? [] { groups.join(host.names) }
        var byKey: [RecordedKey: [(TidyLocation, Set<String>)]] = [:]
        for location in order {
            guard let entry = context.lines[location]?.entry, entry.marker == nil,
                  let names = context.exactNames(location), !names.isEmpty else { continue }
            groups.join(Array(names))
            byKey[entry.publicKey, default: []].append((location, names))
        }
        var findings: [TidyFinding] = []
        for (_, lines) in byKey where lines.count > 1 {
            let roots = lines.map { groups.root($0.1.first!) }
            guard Set(roots).count > 1 else { continue }
            for (index, (location, names)) in lines.enumerated() {
                let others = lines.indices.filter { roots[$0] != roots[index] }.map { lines[$0].0 }
                findings.append(finding(context.lines[location]!, .sharedKey, names: Array(names), related: others))
            }
        }
        return findings
    }
}

/// Union-find over names; a name's bare host (`[h]:port` -> `h`) is joined with it.
struct NameGroups {
    private var parent: [String: String] = [:]

    mutating func root(_ name: String) -> String {
        var current = name
        while let next = parent[current], next != current { current = next }
        if parent[name] != nil { parent[name] = current }
        return current
    }

    mutating func join(_ names: [String]) {
        let all = names + names.compactMap(NameGroups.bare)
        guard let first = all.first else { return }
        let target = root(first)
        parent[target] = target
        for name in all.dropFirst() {
            let other = root(name)
            if other != target { parent[other] = target }
        }
    }

    static func bare(_ name: String) -> String? {
        guard name.hasPrefix("["), let close = name.lastIndex(of: "]") else { return nil }
        return String(name[name.index(after: name.startIndex)..<close])
    }
}

extension KnownHostsHygiene.Line {
    /// The host field's bytes, as the parser finds it (after any marker).
    var hostField: [UInt8] {
        var fields = raw.prefix { $0 != 0 }.split(whereSeparator: { $0 == 0x20 || $0 == 0x09 })
        if fields.first?.first == UInt8(ascii: "@") { fields.removeFirst() }
        return fields.first.map(Array.init) ?? []
    }
}

extension PatternList {
    /// Whether some name could match: an element before any overlong one that is positive and
    /// not empty (lookup strings are never empty).
    var canMatch: Bool {
        for element in elements {
            if element.tooLong { return false }
            if !element.negated && !element.pattern.isEmpty { return true }
        }
        return false
    }
}
