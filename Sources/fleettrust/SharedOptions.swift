import ArgumentParser
import Foundation
import FleetTrustCore
import FleetTrustSSH

// The options several commands take, each declared once with its one default.

/// `--inventory` and `--inventory-format`.
struct InventoryOptions: ParsableArguments {
    @Option(name: .customLong("inventory"), help: ArgumentHelp(
        "Inventory: a plain host list, Ansible INI or YAML, ansible-inventory --list JSON, an ssh_config, an Ansible inventory directory, or an executable inventory script (run with --list); '-' reads standard input. Repeatable.",
        valueName: "file"))
    var files: [String] = []

    @Option(help: ArgumentHelp("Inventory format instead of detecting it: plain, ini, yaml, json, ssh-config.", valueName: "format"),
            transform: choice("--inventory-format", "plain, ini, yaml, json or ssh-config"))
    var inventoryFormat: InventoryFormat?

    /// Reads the hosts of `groups` under the user's ssh configuration (`sshConfig`, else
    /// `~/.ssh/config` and `/etc/ssh/ssh_config`, whose host-key settings apply to hosts of every
    /// inventory that is not an ssh_config, as the `ssh` the user runs applies them). Every
    /// problem is printed as `file:line: message`; no host left is exit 64.
    func load(groups: [String] = [], direct: Bool = false, sshConfig: String? = nil, allowProxyCommands: Bool = false) throws -> Inventory {
        let options: InventoryReadOptions
        do {
            let read = try InventoryReadOptions.underUserConfiguration(explicit: sshConfig.map(expandTilde), allowProxyCommands: allowProxyCommands)
            read.errors.forEach { printError($0.description) }
            var readOptions = read.options
            readOptions.hostNameResolver = SystemHostNameResolver()
            readOptions.matchExecRunner = MatchExecRunner()
            options = readOptions
        } catch {
            throw CommandFailure.unreadableInput("--ssh-config \(error)")
        }
        let selection = InventorySelection(files: files.map { $0 == "-" ? $0 : expandTilde($0) }, format: inventoryFormat,
                                           groups: groups, direct: direct)
        let loaded: (inventory: Inventory, skipped: String?)
        do { loaded = try selection.load(options: options) } catch { throw CommandFailure.unreadableInput(error.description) }
        loaded.inventory.diagnostics.forEach { printError($0.description) }
        loaded.skipped.map(printError)
        guard !loaded.inventory.hosts.isEmpty else { throw CommandFailure.unreadableInput(selection.nothingSelected) }
        return loaded.inventory
    }
}

/// `--known-hosts`: the files judged against, checked and saved to (the first).
struct KnownHostsOptions: ParsableArguments {
    @Option(name: .customLong("known-hosts"), help: ArgumentHelp(
        "known_hosts file to judge against (the dashboard and sync save to the first one). Repeatable. "
            + "Default: the four files ssh reads, \(DefaultKnownHostsFiles.described) (new entries go to the first).", valueName: "file"))
    var files: [String] = []

    /// The files in use: as given, or OpenSSH's defaults (user files, then global files).
    var chosen: (user: [String], global: [String]) { DefaultKnownHostsFiles.chosen(given: files.map(expandTilde), home: expandTilde("~")) }
    var all: [String] { chosen.user + chosen.global }

    /// One warning for each given file that does not exist (each named once): it is judged as
    /// empty, as `ssh` judges a missing file, but a mistyped path would make every host look new.
    var missingWarnings: [String] {
        var seen = Set<String>()
        return files.map(expandTilde).filter { seen.insert($0).inserted && InputFile.isMissing($0) }
            .map { "warning: \($0): no such known_hosts file; judging as if it were empty, as ssh does" }
    }

    /// The first given file that does not exist, for commands that write (a typo, not an empty file).
    var firstMissing: String? { files.map(expandTilde).first { !FileManager.default.fileExists(atPath: $0) } }
}

/// `--pins` and `--pins-mode`.
struct PinOptions: ParsableArguments {
    @Option(name: .customLong("pins"), help: ArgumentHelp("Pin file: the team's pinned fingerprints (format: FILE FORMATS in man fleettrust).", valueName: "file"))
    var file: String?

    @Option(help: ArgumentHelp("enforce (the default): a pin mismatch fails the host; report: it is shown but does not fail.", valueName: "mode"),
            transform: choice("--pins-mode", "enforce or report"))
    var pinsMode: PinMode = .enforce

    var path: String? { file.map(expandTilde) }
    /// The pin files in use (none or one), as a report lists them.
    var files: [String] { path.map { [$0] } ?? [] }

    /// The pin file read; nil when none is given. A pin file with bad lines is refused: a
    /// skipped pin would leave its host unpinned.
    func load() throws -> PinSet? {
        guard let path else { return nil }
        do { return try PinSet.read(path: path) } catch { throw CommandFailure.unreadableInput("\(error)") }
    }
}

/// `--audit-log`: where every change to known_hosts or pins is recorded.
struct AuditLogOptions: ParsableArguments {
    @Option(name: .customLong("audit-log"), help: ArgumentHelp(
        "Where each change to known_hosts or pins is appended as a JSON line. "
            + "Default: $XDG_STATE_HOME/fleettrust/audit.jsonl, else ~/.local/state/fleettrust/audit.jsonl.", valueName: "file"))
    var path: String?

    var log: AuditLog {
        AuditLog(path: path.map { URL(fileURLWithPath: expandTilde($0)).path } ?? AuditLog.defaultPath(environment: ProcessInfo.processInfo.environment))
    }

    var user: String { AuditLog.currentUser(environment: ProcessInfo.processInfo.environment) }
}

/// `--history`: the history database.
struct HistoryFileOption: ParsableArguments {
    @Option(name: .customLong("history"), help: ArgumentHelp(
        "The history database (SQLite) that remembers every key each host presented, for drift. "
            + "Default: $XDG_STATE_HOME/fleettrust/history.sqlite, else ~/.local/state/fleettrust/history.sqlite.",
        valueName: "file"))
    var given: String?

    /// The store's path, `~` expanded.
    var path: String { expandTilde(given ?? HistoryStore.defaultPath(environment: ProcessInfo.processInfo.environment)) }
}

extension InventoryFormat: ExpressibleByArgument {}
extension PinMode: ExpressibleByArgument {}
extension TidyFindingKind: ExpressibleByArgument {
    public init?(argument: String) {
        guard let kind = TidyReport.kind(word: argument) else { return nil }
        self = kind
    }
}

extension HashChoice: ExpressibleByArgument {}

/// `transform:` for an enum option: its value, or a usage error naming the accepted words.
func choice<T: ExpressibleByArgument>(_ option: String, _ words: String) -> @Sendable (String) throws -> T {
    { text in
        guard let value = T(argument: text) else { throw ValidationError("\(option) must be \(words)") }
        return value
    }
}

/// `--timeout SECONDS` (and discover's `-T`): a number of seconds, more than 0 and at most an hour;
/// a bad value is refused with the accepted range.
func parseTimeout(_ text: String) throws -> Double {
    guard let seconds = Double(text), seconds > 0, seconds <= 3600 else {
        throw ValidationError("the timeout must be a number of seconds, more than 0 and at most 3600")
    }
    return seconds
}

func expandTilde(_ path: String) -> String {
    guard path == "~" || path.hasPrefix("~/") else { return path }
    let home = getpwuid(getuid()).map { String(cString: $0.pointee.pw_dir) } ?? NSHomeDirectory()
    return home + path.dropFirst()
}
