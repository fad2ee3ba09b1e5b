import ArgumentParser
import Foundation
import FleetTrustCore

/// `fleettrust tidy`: known_hosts hygiene, reported per file and line, and removed on request.
struct TidyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tidy",
        abstract: "Report known_hosts lines nobody can explain, and remove the ones you choose.",
        discussion: """
            Kinds: duplicate, conflicting (a name with two keys of one type: ssh accepts either), \
            unmatchable (ssh never uses the line), revoked-recorded (a key a @revoked line revokes), \
            unknown-host (with --inventory: no inventory host uses the line's names), shared-key (one key \
            for unrelated hosts) and unused-key-type (a type the host stopped presenting; needs the scan \
            history, read from --history: a key type the host's latest complete recorded probe did not present). --fix removes the chosen findings' lines after showing them: on a terminal it asks \
            which and then for confirmation; scripts select with --kind and --line and confirm with --yes. \
            @cert-authority and @revoked lines are never removed; the write is compare-and-set (refused if \
            the file changed since it was read) and each removed line goes to the audit log. \
            Exit status: 0 no findings (or all removed); 1 findings remain; 2 a conflicting or \
            revoked-recorded finding remains; 3 a --fix write was refused or failed; 64 bad usage or \
            unreadable input.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case table, json }

    @OptionGroup var knownHosts: KnownHostsOptions

    @OptionGroup var inventory: InventoryOptions

    @Option(help: "table: one line a finding; json: {\"findings\": [{file, line, kind, names, message}]}.")
    var format: Format = .table

    @Flag(help: "Remove the selected findings' lines, after confirmation.")
    var fix = false

    @Option(help: ArgumentHelp("With --fix: select the findings of this kind. Repeatable.", valueName: "kind"),
            transform: choice("--kind", "one of " + TidyFindingKind.allCases.map(TidyReport.word).joined(separator: ", ")))
    var kind: [TidyFindingKind] = []

    @Option(help: ArgumentHelp("With --fix: select the findings on this line (FILE:LINE). Repeatable.", valueName: "file:line"))
    var line: [String] = []

    @Flag(help: "With --fix: remove the selection without asking (for scripts).")
    var yes = false

    @OptionGroup var historyFile: HistoryFileOption

    @Flag(name: .customLong("no-history"), help: ArgumentHelp(
        "Do not read the history (tidy never records one): --fix then judges each host with every key known_hosts records for it, "
            + "not only the keys it presented at its last scan, so it may keep more lines."))
    var noHistory = false

    @OptionGroup var audit: AuditLogOptions

    func validate() throws {
        if noHistory && historyFile.given != nil { throw ValidationError("--no-history and --history contradict each other") }
        for item in line where TidySelection.location(item) == nil { throw ValidationError("--line takes FILE:LINE, not \(item)") }
        if !fix && (!kind.isEmpty || !line.isEmpty || yes) { throw ValidationError("--kind, --line and --yes select what --fix removes; add --fix") }
        if fix && yes && kind.isEmpty && line.isEmpty { throw ValidationError("--fix --yes needs a selection: --kind KIND or --line FILE:LINE") }
    }

    func run() throws {
        // A file named on the command line that does not exist is a typo, not an empty file: saying
        // "no findings" about it would be a wrong answer.
        if let missing = knownHosts.firstMissing { fail("\(Sanitizer.clean(missing)): no such file (given as the known_hosts file)") }
        var files = readFiles()
        var hosts: [HygieneHost]?
        var presented: [String: Set<String>] = [:]
        var decisionGuard = TidyDecisionGuard(files: files)
        if !inventory.files.isEmpty {
            do {
                let read = try inventory.load()
                hosts = read.hosts.map(HygieneHost.init)
                let history = try remembered(read.hosts)
                presented = KnownHostsHygiene.presentedKeyTypes(of: read.hosts, history: history)
                decisionGuard = TidyDecisionGuard(files: files, hosts: read.hosts,
                                                  presented: TidyDecisionGuard.presentedKeys(of: read.hosts, history: history))
            } catch { fail("\(error)") }
        }
        var findings = KnownHostsHygiene(files: files, inventory: hosts, presentedKeyTypes: presented).findings()
        if fix, try removeSelected(findings, files: files, decisionGuard: decisionGuard) {
            // What is really left, at the line numbers the files have now.
            files = readFiles()
            findings = KnownHostsHygiene(files: files, inventory: hosts, presentedKeyTypes: presented).findings()
            if format == .table { print("left after the fix:") }
        }
        do {
            print(format == .json ? try TidyReport.json(findings) : TidyReport.table(findings), terminator: format == .json ? "\n" : "")
        } catch { fail("\(error)") }
        if findings.contains(where: { [.conflicting, .revokedRecorded].contains($0.kind) }) { throw ExitCode(2) }
        if !findings.isEmpty { throw ExitCode(1) }
    }

    private func fail(_ message: String) -> Never {
        printError("tidy: \(message)")
        Self.exit(withError: ExitCode(64))
    }

    private func readFiles() -> [KnownHostsFile] {
        do { return try knownHosts.all.map { try KnownHostsFile.read(path: $0) } } catch { fail("\(error)") }
    }

    /// What the history remembers of these hosts, read-only (tidy records nothing); empty without one.
    private func remembered(_ hosts: [InventoryHost]) throws -> FleetHistory {
        guard !noHistory, let store = try HistoryStore.open(path: historyFile.path, readOnly: true) else { return FleetHistory() }
        return try store.history(for: hosts)
    }

    /// Asks (or takes --kind/--line/--yes), writes each file once, logs; true when a file was written.
    private func removeSelected(_ findings: [TidyFinding], files: [KnownHostsFile], decisionGuard: TidyDecisionGuard) throws -> Bool {
        var session = TidyFixSession(
            selection: TidySelection(kinds: kind, lines: line.compactMap(TidySelection.location).map { (expandTilde($0.path), $0.line) }),
            confirmed: yes, editor: TrustStoreEditor(hashNames: false), log: audit.log, user: audit.user,
            say: { text, terminator in
                if format == .json { FileHandle.standardError.write(Data((text + terminator).utf8)) } else { print(text, terminator: terminator) }
            },
            ask: { readLine() }, complain: printError)
        session.decisionGuard = decisionGuard
        let selected = session.selected(findings, files: files)
        if !yes && isatty(0) != 1 {
            printError("tidy: --fix asks for confirmation on a terminal; for scripts select with --kind or --line and add --yes")
            throw ExitCode(64)
        }
        switch session.remove(selected, of: findings, files: files) {
        case .nothingRemoved: return false
        case .removed: return true
        case .failed: throw ExitCode(3)
        }
    }
}
