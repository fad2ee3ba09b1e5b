/// Finds the known_hosts lines nobody can explain (`fleettrust tidy`): a pure function of the
/// files, the inventory's names and, when known, the key types each host presented last.
///
/// Which line matches which name is decided by the same matcher judging uses (OpenSSH's
/// rules), so a finding never disagrees with what `ssh` reads. Hashed lines are named by
/// matching them against every name the tool knows (plain names in the files, the inventory's
/// lookup names, the hosts of `presentedKeyTypes`); a hashed line no known name matches can
/// only be compared byte for byte.
public struct KnownHostsHygiene: Sendable {
    public let files: [KnownHostsFile]
    /// Each inventory host's names, or nil without an inventory.
    public let inventory: [HygieneHost]?
    /// Key types each host presented at its last scan, by the host's known_hosts lookup
    /// string (`LookupName.hostString`); the history store supplies it. Empty: no finding of
    /// kind unused-key-type.
    public let presentedKeyTypes: [String: Set<String>]

    public init(files: [KnownHostsFile], inventory: [HygieneHost]? = nil, presentedKeyTypes: [String: Set<String>] = [:]) {
        self.files = files
        self.inventory = inventory
        self.presentedKeyTypes = presentedKeyTypes
    }

    struct Line {
        let location: TidyLocation
        let raw: [UInt8]
        let content: KnownHostsLine.Content
        var entry: KnownHostsEntry? { if case .entry(let entry) = content { return entry }; return nil }
        var text: String { String(decoding: raw, as: UTF8.self) }
        var isMarked: Bool { KnownHostsLine.startsWithMarker(raw) }
    }

    /// Every finding, in file and line order.
    public func findings() -> [TidyFinding] {
        var lines: [TidyLocation: Line] = [:]
        var order: [TidyLocation] = []
        var literal: [TidyLocation: Set<String>] = [:]
        for (fileIndex, file) in files.enumerated() {
            for line in file.lines {
                let location = TidyLocation(path: file.path, line: line.number, fileIndex: fileIndex)
                lines[location] = Line(location: location, raw: line.raw, content: line.content)
                order.append(location)
                if case .patterns(let list) = line.entry?.hosts, let names = list.literalNames {
                    literal[location] = Set(names.map { String(decoding: $0, as: UTF8.self) })
                }
            }
        }
        let inventoryNames = Set((inventory ?? []).flatMap(\.names))
        var candidates = Set(literal.values.flatMap { $0 }).union(inventoryNames).union(presentedKeyTypes.keys)
        candidates = Set(candidates.map { String(decoding: KnownHostsPattern.lowercased(Array($0.utf8)), as: UTF8.self) })
        let knownHosts = KnownHosts(files: files).preparing(lookups: Array(candidates))
        var matching: [String: [TidyLocation]] = [:]
        var resolved: [TidyLocation: Set<String>] = [:]
        for name in candidates {
            let found = knownHosts.entries(matching: name).map { match in
                TidyLocation(path: match.path, line: match.line, fileIndex: files.firstIndex { $0.path == match.path } ?? 0)
            }
            matching[name] = found
            for location in found { resolved[location, default: []].insert(name) }
        }
        let context = Context(lines: lines, literal: literal, matching: matching, resolved: resolved)
        var findings: [TidyFinding] = []
        for location in order {
            let line = lines[location]!
            findings += unmatchable(line)
        }
        findings += duplicates(context, order: order)
        findings += conflicts(context)
        findings += revokedRecorded(context)
        if let inventory { findings += unknownHosts(context, order: order, used: inventoryNames, hosts: inventory) }
        findings += unusedKeyTypes(context)
        findings += sharedKeys(context, order: order)
        return findings.sorted { ($0.location, $0.kind.order) < ($1.location, $1.kind.order) }
    }

    struct Context {
        let lines: [TidyLocation: Line]
        /// Literal names of plain lines without wildcards or negation.
        let literal: [TidyLocation: Set<String>]
        /// Name -> valid lines whose host field matches it (OpenSSH's matcher).
        let matching: [String: [TidyLocation]]
        /// Line -> the known names it matches.
        let resolved: [TidyLocation: Set<String>]

        /// The names a line stands for exactly, when they are known: its literal names, or
        /// the names a hashed line was found to match.
        func exactNames(_ location: TidyLocation) -> Set<String>? {
            if let names = literal[location] { return names }
            if case .hashed = lines[location]?.entry?.hosts, let names = resolved[location], !names.isEmpty { return names }
            return nil
        }
    }

    func finding(_ line: Line, _ kind: TidyFindingKind, names: [String] = [], related: [TidyLocation] = [],
                 keyType: String? = nil, reason: String? = nil, removable: Bool = true) -> TidyFinding {
        TidyFinding(location: line.location, kind: kind, names: names.sorted(), related: related.sorted(), keyType: keyType,
                    reason: reason, text: line.text, removable: removable && !line.isMarked && kind != .sharedKey)
    }
}

/// One inventory host's names as `ssh` and fleettrust look them up.
public struct HygieneHost: Sendable, Hashable {
    public let names: [String]

    /// The lookup strings (`LookupName`) of the host's address (with the bare retry for a non-22
    /// port), of its `HostKeyAlias` and of its additional names (its inventory name, except a
    /// plain list's line text: `127.0.0.1:2222` is no name `ssh` looks up).
    public init(_ host: InventoryHost) {
        var names: [String] = []
        for lookup in [LookupName(host: host.address, port: host.port, hostKeyAlias: host.hostKeyAlias),
                       LookupName(host: host.address, port: host.port)]
            + host.additionalNames.map({ LookupName(host: $0, port: host.port) }) {
            names.append(lookup.hostString)
            if let retry = lookup.retryString { names.append(retry) }
        }
        var seen = Set<String>()
        self.names = names.filter { seen.insert($0).inserted }
    }

    public init(names: [String]) { self.names = names }
}

extension TidyFindingKind {
    /// Report order among findings of one line.
    var order: Int { TidyFindingKind.allCases.firstIndex(of: self)! }
}
