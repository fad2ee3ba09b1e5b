import Foundation

/// `tidy --fix` after the findings are known: which lines go (the selection, or a person's
/// answer to a numbered list), a confirmation showing exactly those lines, then one `TrustEdit`
/// per file through the `TrustStoreEditor` and one `AuditEvent` per finding. The conversation goes
/// through `say` and `ask`, so the command only wires the terminal to it.
public struct TidyFixSession {
    public var selection: TidySelection
    /// `--yes`: remove the selection without asking.
    public var confirmed: Bool
    public var editor: TrustStoreEditor
    public var log: AuditLog
    public var user: String
    /// Prints text followed by a terminator (`""` before a question).
    public var say: (String, String) -> Void
    /// One line typed by the person; nil at end of input.
    public var ask: () -> String?
    /// Reports a failure (standard error).
    public var complain: (String) -> Void
    /// Proves the removal changes no decision of `ssh` before anything is written.
    public var decisionGuard: TidyDecisionGuard?

    public init(selection: TidySelection, confirmed: Bool, editor: TrustStoreEditor, log: AuditLog, user: String,
                say: @escaping (String, String) -> Void, ask: @escaping () -> String?, complain: @escaping (String) -> Void) {
        self.selection = selection
        self.confirmed = confirmed
        self.editor = editor
        self.log = log
        self.user = user
        self.say = say
        self.ask = ask
        self.complain = complain
    }

    /// What the selection picks, each line it cannot pick said with the reason.
    public func selected(_ findings: [TidyFinding], files: [KnownHostsFile]) -> [TidyFinding] {
        let selected = selection.choose(from: findings, files: files)
        selected.notes.forEach { say($0, "\n") }
        return selected.chosen
    }

    public enum Ending: Equatable {
        case nothingRemoved, removed
        /// A write was refused or failed (exit 3).
        case failed
    }

    /// Asks which (without a selection), keeps every name's last line, confirms, writes, logs.
    public func remove(_ selected: [TidyFinding], of findings: [TidyFinding], files: [KnownHostsFile]) -> Ending {
        var chosen = selected
        if !confirmed && selection.isEmpty {
            let removable = findings.filter(\.removable)
            guard !removable.isEmpty else { return .nothingRemoved }
            for (index, finding) in removable.enumerated() {
                say("\(index + 1). \(Sanitizer.clean(finding.location.path)):\(finding.location.line)  \(TidyReport.word(finding.kind))  \(TidyReport.message(finding))", "\n")
            }
            say("Remove which? Numbers (1 3 5-7), a kind, 'all', or nothing to cancel: ", "")
            chosen = TidySelection.answer(ask() ?? "", from: removable)
        }
        let proved = decisionGuard?.presented ?? [:]
        let guarded = TidyFix.keepingEveryNamesLastLine(chosen, files: files, presented: proved)
        for location in Set(guarded.kept.map(\.location)).sorted() {
            say("kept \(Sanitizer.clean(location.path)):\(location.line): the last line recording its name (removing every one would make a changed key look new)", "\n")
        }
        let decided = (decisionGuard ?? TidyDecisionGuard(files: files)).check(guarded.remove)
        var reported = Set<TidyLocation>()
        for (finding, why) in decided.kept where reported.insert(finding.location).inserted {
            say("kept \(Sanitizer.clean(finding.location.path)):\(finding.location.line): \(Sanitizer.clean(why, limit: 600))", "\n")
        }
        let lines = Dictionary(grouping: decided.remove, by: \.location).mapValues(\.[0]).sorted { $0.key < $1.key }
        guard !lines.isEmpty else {
            say("nothing removed", "\n")
            return .nothingRemoved
        }
        say(lines.count == 1 ? "This line will be removed:" : "These \(lines.count) lines will be removed:", "\n")
        for (location, finding) in lines {
            say("  \(Sanitizer.clean(location.path)):\(location.line): \(Sanitizer.clean(finding.text, limit: 2000))", "\n")
        }
        if !confirmed {
            say("Remove them? [y/N] ", "")
            guard ["y", "yes"].contains((ask() ?? "").lowercased()) else {
                say("nothing removed", "\n")
                return .nothingRemoved
            }
        }
        do { try log.check() } catch {
            complain("tidy: audit log: \(error); nothing removed")
            return .failed
        }
        var removed = false, failed = false
        for (edit, removing) in TidyFix.edits(removing: decided.remove, files: files) {
            var outcome = AuditEvent.Outcome.written
            do {
                try editor.apply(edit)
                removed = true
                let count = Set(removing.map(\.location)).count
                say("removed \(Counted.of(count, "line")) from \(Sanitizer.clean(edit.path))", "\n")
            } catch {
                outcome = .refused("\(error)")
                failed = true
                complain("tidy: \(error)")
            }
            do { try log.append(removing.map { $0.auditEvent(user: user, time: Date(), outcome: outcome) }) } catch {
                complain("tidy: audit log: \(error)")
            }
        }
        return failed ? .failed : removed ? .removed : .nothingRemoved
    }
}
