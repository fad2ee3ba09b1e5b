import Foundation

/// Which findings `tidy --fix` removes: those of the kinds and on the `FILE:LINE`s given
/// (`--kind`, `--line`), or those a person picks from the numbered list. Only removable findings
/// are ever selected; a `--line` that selects nothing is named with the reason.
public struct TidySelection: Sendable {
    /// `--kind`: every removable finding of these kinds.
    public var kinds: [TidyFindingKind]
    /// The lines as given (the path `~`-expanded, not resolved) with their numbers.
    public var lines: [(path: String, line: Int)]

    public init(kinds: [TidyFindingKind] = [], lines: [(path: String, line: Int)] = []) {
        self.kinds = kinds
        self.lines = lines
    }

    /// Nothing asked for: a person picks from the list.
    public var isEmpty: Bool { kinds.isEmpty && lines.isEmpty }

    /// `FILE:LINE` (the last colon splits, so a path may hold colons); nil when it is not.
    public static func location(_ text: String) -> (path: String, line: Int)? {
        guard let colon = text.lastIndex(of: ":"), let number = Int(text[text.index(after: colon)...]), number > 0 else { return nil }
        return (String(text[..<colon]), number)
    }

    /// The removable findings selected, and one sentence for each line given that selects none.
    public func choose(from findings: [TidyFinding], files: [KnownHostsFile]) -> (chosen: [TidyFinding], notes: [String]) {
        let canonical = lines.map { (path: FileSystemCalls.canonicalPath($0.path), line: $0.line, given: $0.path) }
        func at(_ finding: TidyFinding, _ place: (path: String, line: Int, given: String)) -> Bool {
            FileSystemCalls.canonicalPath(finding.location.path) == place.path && finding.location.line == place.line
        }
        let chosen = findings.filter { finding in
            finding.removable && (kinds.contains(finding.kind) || canonical.contains { at(finding, $0) })
        }
        var notes: [String] = []
        for place in canonical where !chosen.contains(where: { at($0, place) }) {
            let name = "\(Sanitizer.clean(place.given)):\(place.line)"
            if !files.contains(where: { FileSystemCalls.canonicalPath($0.path) == place.path }) {
                notes.append("\(name): not removed: that file is not among those read ("
                             + files.map { Sanitizer.clean($0.path) }.joined(separator: ", ") + ")")
            } else if findings.contains(where: { at($0, place) }) {
                notes.append("\(name): not removed: its finding is only reported (@cert-authority, @revoked and shared-key lines are never removed, "
                             + "nor a name's last line in its file beside a @revoked line)")
            } else {
                notes.append("\(name): not removed: no finding on that line")
            }
        }
        return (chosen, notes)
    }

    /// The findings a typed answer picks from a numbered list: numbers and ranges (1-based,
    /// `1 3 5-7`), kind words, or `all`; anything else picks nothing.
    public static func answer(_ answer: String, from findings: [TidyFinding]) -> [TidyFinding] {
        var chosen = Set<Int>()
        for word in answer.split(whereSeparator: { $0 == " " || $0 == "," }) {
            if word == "all" { chosen.formUnion(findings.indices) }
            if let kind = TidyReport.kind(word: String(word)) { chosen.formUnion(findings.indices.filter { findings[$0].kind == kind }) }
            let bounds = word.split(separator: "-").compactMap { Int($0) }
            if bounds.count == 1 || bounds.count == 2, let low = bounds.first, let high = bounds.last, low >= 1, high >= low,
               low <= findings.count {
                chosen.formUnion((low...min(high, findings.count)).map { $0 - 1 })
            }
        }
        return chosen.sorted().filter { $0 < findings.count }.map { findings[$0] }
    }
}

extension TidyFix {
    /// The chosen findings' lines as one `TrustEdit` per file (in the files' order), each with the
    /// findings it removes.
    public static func edits(removing chosen: [TidyFinding], files: [KnownHostsFile]) -> [(edit: TrustEdit, findings: [TidyFinding])] {
        files.compactMap { file in
            let findings = chosen.filter { $0.location.path == file.path }
            guard !findings.isEmpty else { return nil }
            return (TrustEdit.removeLines(Set(findings.map(\.location.line)), of: file), findings)
        }
    }
}

extension TidyFinding {
    /// The audit event for removing this finding's line, which keeps the line so it can be put back.
    public func auditEvent(user: String, time: Date, outcome: AuditEvent.Outcome) -> AuditEvent {
        AuditEvent(time: time, user: user, action: .tidied(finding: TidyReport.word(kind), file: location.path), host: nil,
                   names: names, oldEntries: ["\(location.path):\(location.line): \(text)"], outcome: outcome)
    }
}

extension KnownHostsHygiene {
    /// The key types each inventory host presented at its latest complete recorded probe, by the
    /// name `ssh` looks it up under, for the unused-key-type finding. A certificate counts as its
    /// key's type: the plain line may still be what `ssh` uses.
    public static func presentedKeyTypes(of hosts: [InventoryHost], history: FleetHistory) -> [String: Set<String>] {
        let suffix = "-cert-v01@openssh.com"
        var presented: [String: Set<String>] = [:]
        for host in hosts where host.endpointProtocol == .ssh {
            let lookup = host.historyKey
            guard let last = history.hosts[lookup], last.latestComplete, !last.latest.isEmpty else { continue }
            presented[lookup, default: []].formUnion(last.latest.map { identity in
                identity.type.hasSuffix(suffix) ? String(identity.type.dropLast(suffix.count)) : identity.type
            })
        }
        return presented
    }
}
