import ArgumentParser
import Foundation
import FleetTrustCore
import FleetTrustDashboard

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

    @Option(name: .customLong("known-hosts"), help: ArgumentHelp(
        "known_hosts file to check. Repeatable. Default: \(DefaultKnownHostsFiles.described).",
        valueName: "file"))
    var knownHostsFiles: [String] = []

    @Option(name: .customLong("inventory"), help: ArgumentHelp("Inventory whose hosts' names count as used (any format scan reads). Repeatable.", valueName: "file"))
    var inventories: [String] = []

    @Option(help: ArgumentHelp("Inventory format instead of detecting it: plain, ini, yaml, json, ssh-config.", valueName: "format"))
    var inventoryFormat: String?

    @Option(help: "table: one line a finding; json: {\"findings\": [{file, line, kind, names, message}]}.")
    var format: Format = .table

    @Flag(help: "Remove the selected findings' lines, after confirmation.")
    var fix = false

    @Option(help: ArgumentHelp("With --fix: select the findings of this kind. Repeatable.", valueName: "kind"))
    var kind: [String] = []

    @Option(help: ArgumentHelp("With --fix: select the findings on this line (FILE:LINE). Repeatable.", valueName: "file:line"))
    var line: [String] = []

    @Flag(help: "With --fix: remove the selection without asking (for scripts).")
    var yes = false

    @OptionGroup var history: HistoryOptions

    @Option(name: .customLong("audit-log"), help: ArgumentHelp("Where removed lines are appended as JSON lines (default: the dashboard's).", valueName: "file"))
    var auditLog: String?

    func validate() throws {
        try history.validateHistory()
        for word in kind where TidyReport.kind(word: word) == nil {
            throw ValidationError("--kind must be one of \(TidyFindingKind.allCases.map(TidyReport.word).joined(separator: ", "))")
        }
        for item in line where TidyCommand.location(item) == nil { throw ValidationError("--line takes FILE:LINE, not \(item)") }
        if !fix && (!kind.isEmpty || !line.isEmpty || yes) { throw ValidationError("--kind, --line and --yes select what --fix removes; add --fix") }
        if fix && yes && kind.isEmpty && line.isEmpty { throw ValidationError("--fix --yes needs a selection: --kind KIND or --line FILE:LINE") }
        if let inventoryFormat, InventoryFormat(argument: inventoryFormat) == nil {
            throw ValidationError("--inventory-format must be plain, ini, yaml, json or ssh-config")
        }
    }

    static func location(_ text: String) -> (path: String, line: Int)? {
        guard let colon = text.lastIndex(of: ":"), let number = Int(text[text.index(after: colon)...]), number > 0 else { return nil }
        return (String(text[..<colon]), number)
    }

    var paths: [String] {
        knownHostsFiles.isEmpty
            ? DefaultKnownHostsFiles.all(home: expandTilde("~"))
            : knownHostsFiles.map(expandTilde)
    }

    func run() throws {
        var files: [KnownHostsFile]
        var hosts: [HygieneHost]?
        var presented: [String: Set<String>] = [:]
        // A file named on the command line that does not exist is a typo, not an empty file: saying
        // "no findings" about it would be a wrong answer.
        for path in knownHostsFiles.map(expandTilde) where !FileManager.default.fileExists(atPath: path) {
            printError("tidy: \(Sanitizer.clean(path)): no such file (given as the known_hosts file)")
            throw ExitCode(64)
        }
        do {
            files = try paths.map { try KnownHostsFile.read(path: $0) }
            if !inventories.isEmpty {
                var arguments = inventories.flatMap { ["--inventory", $0] }
                if let inventoryFormat { arguments += ["--inventory-format", inventoryFormat] }
                let inventory = try FleetOptions.parse(arguments).loadInventory().hosts
                hosts = inventory.map(HygieneHost.init)
                presented = try presentedKeyTypes(of: inventory)
            }
        } catch let failure as CommandFailure {
            printError("tidy: \(failure.description)")
            throw ExitCode(64)
        } catch {
            printError("tidy: \(error)")
            throw ExitCode(64)
        }
        var findings = KnownHostsHygiene(files: files, inventory: hosts, presentedKeyTypes: presented).findings()
        if fix, try removeSelected(findings, files: files) {
            // What is really left, at the line numbers the files have now.
            do { files = try paths.map { try KnownHostsFile.read(path: $0) } } catch {
                printError("tidy: \(error)")
                throw ExitCode(64)
            }
            findings = KnownHostsHygiene(files: files, inventory: hosts, presentedKeyTypes: presented).findings()
            if format == .table { print("left after the fix:") }
        }
        do {
            print(format == .json ? try TidyReport.json(findings) : TidyReport.table(findings), terminator: format == .json ? "\n" : "")
        } catch {
            printError("tidy: \(error)")
            throw ExitCode(64)
        }
        if findings.contains(where: { [.conflicting, .revokedRecorded].contains($0.kind) }) { throw ExitCode(2) }
        if !findings.isEmpty { throw ExitCode(1) }
    }

    /// The key types each inventory host presented at its latest complete recorded probe, by
    /// the name `ssh` looks it up under; read-only (tidy records nothing), empty without a history.
    /// A certificate counts as its key's type: the plain line may still be what `ssh` uses.
    private func presentedKeyTypes(of inventory: [InventoryHost]) throws -> [String: Set<String>] {
        guard !history.noHistory else { return [:] }
        let store: HistoryStore?
        do { store = try HistoryStore.open(path: history.path, readOnly: true) } catch { throw CommandFailure.unreadableInput("\(error)") }
        guard let store else { return [:] }
        let remembered: FleetHistory
        do { remembered = try store.history(for: inventory.map(\.name)) } catch { throw CommandFailure.unreadableInput("\(error)") }
        var presented: [String: Set<String>] = [:]
        for host in inventory where host.tls == nil {
            guard let last = remembered.hosts[host.name], last.latestComplete, !last.latest.isEmpty else { continue }
            let lookup = LookupName(host: host.address, port: host.port, hostKeyAlias: host.hostKeyAlias).hostString
            presented[lookup, default: []].formUnion(last.latest.map { identity in
                identity.type.hasSuffix(Self.certificateSuffix) ? String(identity.type.dropLast(Self.certificateSuffix.count)) : identity.type
            })
        }
        return presented
    }

    private static let certificateSuffix = "-cert-v01@openssh.com"

    /// Asks (or takes --kind/--line/--yes), writes each file once, logs; true when a file was written.
    private func removeSelected(_ findings: [TidyFinding], files: [KnownHostsFile]) throws -> Bool {
        let say = { (text: String, terminator: String) in
            if format == .json { FileHandle.standardError.write(Data((text + terminator).utf8)) } else { print(text, terminator: terminator) }
        }
        let selectedLines = line.compactMap(TidyCommand.location).map { (path: FileSystemCalls.canonicalPath(expandTilde($0.path)), line: $0.line, given: $0.path) }
        var chosen = findings.filter { finding in
            finding.removable && (kind.contains(TidyReport.word(finding.kind))
                || selectedLines.contains { $0.path == FileSystemCalls.canonicalPath(finding.location.path) && $0.line == finding.location.line })
        }
        for selected in selectedLines where !chosen.contains(where: { FileSystemCalls.canonicalPath($0.location.path) == selected.path && $0.location.line == selected.line }) {
            let where_ = "\(Sanitizer.clean(selected.given)):\(selected.line)"
            if !files.contains(where: { FileSystemCalls.canonicalPath($0.path) == selected.path }) {
                say("\(where_): not removed: that file is not among those read (" + files.map { Sanitizer.clean($0.path) }.joined(separator: ", ") + ")", "\n")
            } else if findings.contains(where: { FileSystemCalls.canonicalPath($0.location.path) == selected.path && $0.location.line == selected.line }) {
                say("\(where_): not removed: its finding is only reported (@cert-authority, @revoked and shared-key lines are never removed)", "\n")
            } else {
                say("\(where_): not removed: no finding on that line", "\n")
            }
        }
        let interactive = isatty(0) == 1
        if !yes && !interactive {
            printError("tidy: --fix asks for confirmation on a terminal; for scripts select with --kind or --line and add --yes")
            throw ExitCode(64)
        }
        if !yes && kind.isEmpty && line.isEmpty {
            let removable = findings.filter(\.removable)
            guard !removable.isEmpty else { return false }
            for (index, finding) in removable.enumerated() {
                say("\(index + 1). \(Sanitizer.clean(finding.location.path)):\(finding.location.line)  \(TidyReport.word(finding.kind))  \(TidyReport.message(finding))", "\n")
            }
            say("Remove which? Numbers (1 3 5-7), a kind, 'all', or nothing to cancel: ", "")
            chosen = TidyCommand.selection(readLine() ?? "", from: removable)
        }
        let guarded = TidyFix.keepingEveryNamesLastLine(chosen, files: files)
        for location in Set(guarded.kept.map(\.location)).sorted() {
            say("kept \(Sanitizer.clean(location.path)):\(location.line): the last line recording its name (removing every one would make a changed key look new)", "\n")
        }
        chosen = guarded.remove
        let lines = Dictionary(grouping: chosen, by: \.location).keys.sorted()
        guard !lines.isEmpty else {
            say("nothing removed", "\n")
            return false
        }
        say(lines.count == 1 ? "This line will be removed:" : "These \(lines.count) lines will be removed:", "\n")
        for location in lines {
            let text = chosen.first { $0.location == location }!.text
            say("  \(Sanitizer.clean(location.path)):\(location.line): \(Sanitizer.clean(text, limit: 2000))", "\n")
        }
        if !yes {
            say("Remove them? [y/N] ", "")
            guard ["y", "yes"].contains((readLine() ?? "").lowercased()) else {
                say("nothing removed", "\n")
                return false
            }
        }
        let environment = ProcessInfo.processInfo.environment
        let log = AuditLog(path: auditLog.map { URL(fileURLWithPath: expandTilde($0)).path } ?? AuditLog.defaultPath(environment: environment))
        let user = AuditLog.currentUser(environment: environment)
        var removed = Set<TidyLocation>()
        var failed = false
        for file in files {
            let numbers = Set(lines.filter { $0.path == file.path }.map(\.line))
            guard !numbers.isEmpty else { continue }
            var outcome = "removed"
            do {
                try TidyFix(file: file).apply(removing: numbers)
                removed.formUnion(lines.filter { $0.path == file.path })
                say("removed \(numbers.count) line\(numbers.count == 1 ? "" : "s") from \(Sanitizer.clean(file.path))", "\n")
            } catch {
                outcome = "not removed: \(error)"
                failed = true
                printError("tidy: \(error)")
            }
            let records = chosen.filter { $0.location.path == file.path }.map { finding in
                AuditLog.tidyRecord(names: finding.names, kind: TidyReport.word(finding.kind), path: file.path,
                                    line: finding.location.line, text: finding.text, user: user, time: Date(), outcome: outcome)
            }
            do { try log.append(records) } catch { printError("tidy: audit log: \(error)") }
        }
        if failed { throw ExitCode(3) }
        return !removed.isEmpty
    }

    /// The findings a typed answer selects: numbers and ranges (1-based), kind words, or `all`.
    static func selection(_ answer: String, from findings: [TidyFinding]) -> [TidyFinding] {
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
