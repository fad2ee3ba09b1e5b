/// Removes the lines of chosen findings from one known_hosts file through `GuardedFile`.
///
/// The findings were computed from the bytes the user was shown; if the file holds anything
/// else at write time than those bytes and lines appended after them (an `ssh` append, which is
/// kept), the removal is refused: the user confirmed exact lines of a file that no longer exists. Every byte of every other line is
/// kept, a missing final newline included. `@`-lines are never removed.
public struct TidyFix: Sendable {
    public let file: KnownHostsFile

    public init(file: KnownHostsFile) { self.file = file }

    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        case markerLine(path: String, line: Int)
        case noSuchLine(path: String, line: Int)

        public var description: String {
            switch self {
            case .markerLine(let path, let line):
                return "\(Sanitizer.clean(path)):\(line): @cert-authority and @revoked lines are never removed by tidy"
            case .noSuchLine(let path, let line): return "\(Sanitizer.clean(path)):\(line): no such line"
            }
        }
    }

    /// The file's bytes without `lines` (1-based numbers).
    public func rendered(removing lines: Set<Int>) throws -> [UInt8] {
        let list = file.lines
        for number in lines {
            guard number >= 1, number <= list.count else { throw Refusal.noSuchLine(path: file.path, line: number) }
            if KnownHostsLine.startsWithMarker(list.raw(at: number - 1)) {
                throw Refusal.markerLine(path: file.path, line: number)
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(file.bytes.count)
        for index in list.indices where !lines.contains(index + 1) {
            let range = list.range(at: index)
            out += file.bytes[range]
            if range.upperBound < file.bytes.count { out.append(0x0a) }
        }
        return out
    }

    /// Writes the file without `lines`; returns the removed lines' text, in order.
    @discardableResult
    public func apply(removing lines: Set<Int>) throws -> [String] {
        let output = try rendered(removing: lines)
        try GuardedFile(path: file.path).update { current in
            // Lines appended since tidy read the file (`ssh` adding a host, a late writer to the
            // replaced copy) are kept after the fix; any other change refuses it.
            guard current.starts(with: file.bytes), current.count == file.bytes.count || file.bytes.isEmpty || file.bytes.last == 0x0a else {
                throw StoreError.conflict(path: file.path, detail: "it was changed after tidy read it")
            }
            return output + current[file.bytes.count...]
        }
        return lines.sorted().map { String(decoding: file.lines.raw(at: $0 - 1), as: UTF8.self) }
    }
}

extension TidyFix {
    /// The chosen findings less those whose lines are the last plain (unmarked) lines of a file
    /// recording a name their findings stand for. Each finding was decided one line at a time; together
    /// they could remove every line for a name (both lines of a conflicting pair, the only plain
    /// line beside a `@revoked` one), and a later different key would then be `new` where `ssh`
    /// refuses it as changed today; and a host whose own UserKnownHostsFile is one of the files
    /// reads only that one. For each such name and file the first of its chosen lines is kept. Unknown-host and unmatchable findings are left as chosen: no inventory
    /// host uses those names, or nothing matches the line.
    /// Of a name's lines, the one kept is the one recording a key the host presented at its last
    /// scan (`presented`, fingerprints by lookup string), when one does: the line `ssh` trusts it by.
    public static func keepingEveryNamesLastLine(_ chosen: [TidyFinding], files: [KnownHostsFile],
                                                 presented: [String: Set<String>] = [:]) -> (remove: [TidyFinding], kept: [TidyFinding]) {
        let guardedKinds: Set<TidyFindingKind> = [.duplicate, .conflicting, .revokedRecorded]
        let names = Set(chosen.filter { guardedKinds.contains($0.kind) }.flatMap(\.names))
        guard !names.isEmpty else { return (chosen, []) }
        let knownHosts = KnownHosts(files: files)
        var removing = Set(chosen.map(\.location))
        var keep = Set<TidyLocation>()
        for name in names.sorted() {
            let matches = knownHosts.entries(matching: name).filter { $0.entry.marker == nil }
            let location = { (match: KnownHosts.Match) in
                TidyLocation(path: match.path, line: match.line, fileIndex: files.firstIndex { $0.path == match.path } ?? 0)
            }
            let plain = matches.map(location)
            let proving = Set(matches.filter { presented[name]?.contains($0.entry.key.fingerprint) == true }.map(location))
            // Per file: a host may read only one of them (its own UserKnownHostsFile).
            for (_, inFile) in Dictionary(grouping: plain, by: \.path) {
                guard inFile.allSatisfy(removing.contains),
                      let first = inFile.filter(proving.contains).min() ?? inFile.min() else { continue }
                removing.remove(first)
                keep.insert(first)
            }
        }
        return (chosen.filter { !keep.contains($0.location) }, chosen.filter { keep.contains($0.location) })
    }
}
