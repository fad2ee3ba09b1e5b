/// Saves trust decisions into a known_hosts file without losing or corrupting anything.
///
/// Each edit goes through `GuardedFile`: it re-reads the file under its lock and applies itself to the
/// fresh content, so unrelated changes made meanwhile (for example `ssh` appending another
/// host) are kept byte for byte. If the lines for the edited names changed since the
/// caller's snapshot (`basedOn`), the decision was made on stale facts: the edit is refused.
public struct KnownHostsWriter: Sendable {
    public let path: String
    /// Write new names hashed (`HashKnownHosts yes`), one line per name.
    public var hashNames: Bool

    public init(path: String, hashNames: Bool) {
        self.path = path
        self.hashNames = hashNames
    }

    public enum Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        /// Lines for this name changed since the snapshot the decision was based on.
        case concurrentChange(path: String)
        case invalidName(String)

        public var description: String {
            switch self {
            case .concurrentChange(let path):
                return "\(Sanitizer.clean(path)) changed for this host since it was read; review it and decide again"
            case .invalidName(let name):
                return "\(Sanitizer.clean(name, limit: 80)) cannot be written as a known_hosts name"
            }
        }
    }

    /// Adds one entry recording `key` for the lookup strings `names`.
    public func add(_ key: HostKey, for names: [String], marker: KnownHostsMarker? = nil,
                    basedOn snapshot: KnownHostsFile? = nil) throws {
        try edit(names: names, basedOn: snapshot) { file in
            KnownHostsEdit.terminated(KnownHostsEdit.render(file, dropping: [:])) + (try newLines(key, names: names, marker: marker))
        }
    }

    /// Replaces `old` by `new` for exactly `name`: the old key is removed from that name only
    /// (other names on a shared line keep it) and a new line is added.
    public func replace(_ old: HostKey, with new: HostKey, for name: String, basedOn snapshot: KnownHostsFile? = nil) throws {
        try edit(names: [name], basedOn: snapshot) { file in
            let removal = KnownHostsEdit.removal(in: file, names: [name]) { $0.key == .key(old) }
            return KnownHostsEdit.terminated(KnownHostsEdit.render(file, dropping: removal)) + (try newLines(new, names: [name], marker: nil))
        }
    }

    /// One guarded edit of a host's entries, as a person decided it from what they were shown:
    /// drops the unmarked entries for `names` (plain or hashed) whose keys have the fingerprints
    /// in `removing`, and adds one entry per key in `adding`. With `expecting`, the edit is
    /// refused unless the unmarked keys the file records for `names` are still exactly those
    /// fingerprints: the decision was made on facts that no longer hold.
    public func update(names: [String], removing: Set<String>, adding: [HostKey], expecting: [String]?) throws {
        for name in names where !KnownHostsEdit.isWritableName(name) { throw Refusal.invalidName(name) }
        try GuardedFile(path: path).update { bytes in
            let fresh = KnownHostsFile(path: path, bytes: bytes)
            if let expecting, KnownHostsWriter.recordedFingerprints(names, in: fresh) != expecting.sorted() {
                throw Refusal.concurrentChange(path: path)
            }
            let removal = KnownHostsEdit.removal(in: fresh, names: names) { removing.contains($0.key.fingerprint) }
            var output = KnownHostsEdit.terminated(KnownHostsEdit.render(fresh, dropping: removal))
            for key in adding { output += try newLines(key, names: names, marker: nil) }
            return output
        }
    }

    /// The fingerprints of the unmarked entries recorded for `names`, sorted (a multiset).
    public static func recordedFingerprints(_ names: [String], in file: KnownHostsFile) -> [String] {
        var indices = Set<Int>()
        for name in names { indices.formUnion(file.matchingLines(name)) }
        return indices.compactMap { index -> String? in
            guard let entry = file.lines[index].entry, entry.marker == nil else { return nil }
            return entry.key.fingerprint
        }.sorted()
    }

    /// Removes every unmarked entry for the names, plain or hashed (like `ssh-keygen -R`);
    /// names on shared lines are taken out of the list. Wildcard lines are left alone.
    /// `@cert-authority` and `@revoked` lines are kept. Returns how many lines changed.
    @discardableResult
    public func remove(names: [String], basedOn snapshot: KnownHostsFile? = nil) throws -> Int {
        var changed = 0
        try edit(names: names, basedOn: snapshot) { file in
            let removal = KnownHostsEdit.removal(in: file, names: names) { _ in true }
            changed = removal.count
            return removal.isEmpty ? nil : KnownHostsEdit.render(file, dropping: removal)
        }
        return changed
    }

    private func edit(names: [String], basedOn snapshot: KnownHostsFile?,
                      _ change: (KnownHostsFile) throws -> [UInt8]?) throws {
        for name in names where !KnownHostsEdit.isWritableName(name) { throw Refusal.invalidName(name) }
        try GuardedFile(path: path).update { bytes in
            let fresh = KnownHostsFile(path: path, bytes: bytes)
            if let snapshot, snapshot.bytes != bytes,
               KnownHostsEdit.linesTouching(names, in: snapshot) != KnownHostsEdit.linesTouching(names, in: fresh) {
                throw Refusal.concurrentChange(path: path)
            }
            return try change(fresh) ?? bytes
        }
    }

    /// Names are written lowercased: `ssh` hashes and looks up lowercased names.
    private func newLines(_ key: HostKey, names: [String], marker: KnownHostsMarker?) throws -> [UInt8] {
        let prefix = marker.map { $0.rawValue + " " } ?? ""
        let names = names.map { String(decoding: KnownHostsPattern.lowercased(Array($0.utf8)), as: UTF8.self) }
        let fields = hashNames ? try names.map { try HashedHostName(hashing: $0).field } : [names.joined(separator: ",")]
        return fields.flatMap { Array((prefix + $0 + " " + key.openSSHLine + "\n").utf8) }
    }
}

/// The byte-level edits behind `KnownHostsWriter`: unrelated lines are copied unchanged.
enum KnownHostsEdit {
    /// What happens to a line: dropped, or rewritten with a shorter host list.
    enum LineChange: Equatable { case drop, rewrite([UInt8]) }

    /// Names that `ssh` would also write: no whitespace, no pattern or list characters.
    static func isWritableName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count < 1000 && !name.utf8.contains { byte in
            byte <= 0x20 || byte == 0x7f || ",*?!|#@".utf8.contains(byte)
        }
    }

    /// The raw bytes of every line (valid or not) whose host field matches one of `names`.
    static func linesTouching(_ names: [String], in file: KnownHostsFile) -> [[UInt8]] {
        var indices = Set<Int>()
        for name in names { indices.formUnion(file.matchingLines(name)) }
        for (index, line) in file.lines.enumerated() where line.entry == nil && !line.raw.isEmpty {
            if names.contains(where: { name in line.raw.firstRange(of: Array(name.utf8)) != nil }) { indices.insert(index) }
        }
        return indices.sorted().map { file.lines[$0].raw }
    }

    /// Unmarked entries for `names` whose key passes `which`: hashed lines are dropped,
    /// literal names are removed from their list (the line dropped when none is left).
    static func removal(in file: KnownHostsFile, names: [String], which: (KnownHostsEntry) -> Bool) -> [Int: LineChange] {
        let targets = Set(names.map { KnownHostsPattern.lowercased(Array($0.utf8)) })
        var result: [Int: LineChange] = [:]
        for (index, line) in file.lines.enumerated() {
            guard let entry = line.entry, entry.marker == nil, which(entry) else { continue }
            switch entry.hosts {
            case .hashed(let hashed):
                if names.contains(where: { hashed.matches($0) }) { result[index] = .drop }
            case .patterns(let list):
                guard list.keptByForget == nil else { continue }
                let elements = list.text.split(separator: ",", omittingEmptySubsequences: false)
                let kept = elements.filter { !targets.contains(KnownHostsPattern.lowercased(Array($0.utf8))) }
                guard kept.count != elements.count else { continue }
                if kept.allSatisfy(\.isEmpty) {
                    result[index] = .drop
                } else {
                    result[index] = .rewrite(rewritten(line.raw, hosts: kept.joined(separator: ",")))
                }
            }
        }
        return result
    }

    /// The line with its host field replaced; every other byte kept.
    static func rewritten(_ raw: [UInt8], hosts: String) -> [UInt8] {
        var start = 0
        while start < raw.count, raw[start] == 0x20 || raw[start] == 0x09 { start += 1 }
        var end = start
        while end < raw.count, raw[end] != 0x20, raw[end] != 0x09, raw[end] != 0 { end += 1 }
        return Array(raw[..<start]) + Array(hosts.utf8) + Array(raw[end...])
    }

    /// The file's bytes with the changes applied; a missing final newline stays missing.
    static func render(_ file: KnownHostsFile, dropping changes: [Int: LineChange]) -> [UInt8] {
        if changes.isEmpty { return file.bytes }
        var out: [UInt8] = []
        out.reserveCapacity(file.bytes.count + 256)
        let lastIndex = file.lines.count - 1
        for (index, line) in file.lines.enumerated() {
            switch changes[index] {
            case .drop: continue
            case .rewrite(let bytes): out += bytes
            case nil: out += line.raw
            }
            if index != lastIndex || file.bytes.last == 0x0a { out.append(0x0a) }
        }
        return out
    }

    /// `bytes` ending in a newline (unless empty), so a line can be appended.
    static func terminated(_ bytes: [UInt8]) -> [UInt8] {
        bytes.isEmpty || bytes.last == 0x0a ? bytes : bytes + [0x0a]
    }
}
