import ArgumentParser
import CBuildVersion
import FleetTrustCore
import FleetTrustDashboard
import FleetTrustSSH
import Foundation

/// The `fleettrust` command: the dashboard by default, and the scriptable tools as subcommands.
///
/// The dashboard is the default subcommand rather than the root's own `run`, so that the root
/// declares no options: swift-argument-parser lets a parent's options follow a subcommand's
/// name, and a root `--known-hosts` would take `verify --known-hosts FILE` for itself.
@main
struct FleetTrust: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleettrust",
        abstract: "Establish and audit SSH host-key trust across a fleet.",
        discussion: """
            `fleettrust --inventory FILE` opens the dashboard (the default subcommand): every host is \
            probed in the background and its keys checked against your known_hosts files. Press ? \
            inside for the keys.
            """,
        version: versionText,
        subcommands: [
            DashboardCommand.self,
            ScanCommand.self,
            MergeCommand.self,
            DiscoverCommand.self,
            SyncCommand.self,
            VerifyCommand.self,
            HistoryCommand.self,
            TidyCommand.self,
        ],
        defaultSubcommand: DashboardCommand.self)

    /// Runs the command; a usage error (an unknown option, a bad value, a missing inventory) is
    /// one line on standard error, `fleettrust: MESSAGE (see 'fleettrust COMMAND --help')`, and
    /// exit status 64, like every unreadable input, rather than argument-parser's usage block.
    static func main() async {
        if let word = CommandLine.arguments.dropFirst().first, let problem = unknownCommand(word) {
            printError(problem)
            exit(withError: ExitCode(64))
        }
        do {
            var command = try parseAsRoot()
            if var asynchronous = command as? AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            guard code == .validationFailure, !(error is ExitCode) else { exit(withError: error) }
            if !message(for: error).hasPrefix("Unknown option"), let mistyped = MistypedOption.problem(in: Array(CommandLine.arguments.dropFirst()), root: self) {
                printError(mistyped + UsageHint.from(fullMessage(for: error)))
                exit(withError: ExitCode(code.rawValue))
            }
            let message = message(for: error).split(whereSeparator: \.isNewline).map { $0.trimmingWhitespaceOnBothSides() }
                .joined(separator: " ")
            printError(message + UsageHint.from(fullMessage(for: error)))
            exit(withError: ExitCode(code.rawValue))
        }
    }

    /// A first word that is neither an option nor a command (`fleettrust scna`) is named as such,
    /// rather than reaching the dashboard and being told to give an inventory.
    static func unknownCommand(_ word: String) -> String? {
        let commands = configuration.subcommands.map { $0._commandName }
        guard !word.hasPrefix("-"), word != "help", !commands.contains(word) else { return nil }
        return "unknown command '\(Sanitizer.clean(word, limit: 64))' (commands: \(commands.joined(separator: ", ")); see 'fleettrust --help')"
    }

    /// `fleettrust --version`: the version this binary was built as, and the libssh and OpenSSL it
    /// runs on now, as a bug report needs them.
    static var versionText: String {
        """
        fleettrust \(String(cString: fleettrust_build_version()))
        libssh \(LinkedLibraries.libssh)
        \(LinkedLibraries.openSSL)
        """
    }
}

/// `fleettrust [dashboard] --inventory FILE`: the dashboard.
struct DashboardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dashboard",
        abstract: "Open the dashboard on an inventory (the default: `fleettrust --inventory FILE`).",
        discussion: """
            Every host is probed in the background and its keys checked against your known_hosts \
            files and pins. Press ? inside for the keys. Decisions are appended to an audit log \
            (JSON lines), by default $XDG_STATE_HOME/fleettrust/audit.jsonl or \
            ~/.local/state/fleettrust/audit.jsonl.
            """)

    @OptionGroup var fleet: FleetOptions

    @OptionGroup var history: HistoryOptions

    @Option(help: "Theme name (default, light, high-contrast, monochrome) or path to a .theme file.")
    var theme: String = "default"

    @Flag(name: .customLong("read-only"), help: "Never write anything: no trust, pin, forget, no audit log, no history.")
    var readOnly = false

    @Option(name: .customLong("audit-log"), help: "Where decisions are appended as JSON lines.")
    var auditLog: String?

    @Option(name: .customLong("connect-command"),
            help: "Command for `c`: placeholders {options} {port} {target} {host} {name}.")
    var connectCommand: String = ConnectCommand.defaultTemplate

    @Option(help: "Login user for `c` when the inventory names none.")
    var user: String?

    func validate() throws {
        try fleet.validateShared()
        if fleet.inventories.isEmpty { throw ValidationError("give an inventory with --inventory FILE") }
        try history.validateHistory()
    }

    mutating func run() async throws {
        do {
            try await openDashboard()
        } catch let failure as CommandFailure {
            printError(failure.description)
            throw ExitCode(64)
        }
    }

    private func openDashboard() async throws {
        let environment = ProcessInfo.processInfo.environment
        let executable = Bundle.main.executableURL?.path ?? CommandLine.arguments[0]
        let chosenTheme: Theme
        do {
            chosenTheme = try Theme.load(theme, searching: Theme.searchDirectories(executable: executable, environment: environment))
        } catch {
            throw CommandFailure.unreadableInput("\(error)")
        }
        do { try CursesTerminal.check(environment: environment) } catch { throw CommandFailure.unreadableInput("\(error)") }
        let hosts = try fleet.loadInventory().hosts
        let knownHostsFiles = fleet.effectiveKnownHostsFiles
        let pinFiles = fleet.pinFiles.map(expandTilde)
        let fleet = fleet
        let store = try await history.open(readOnly: readOnly)
        let remembered = try await history.remembered(store, hosts: hosts)
        let loadJudge: LiveFleetJudge.Loader = {
            var judge = try fleet.loadJudge(for: hosts)
            judge.history = remembered
            return judge
        }
        let firstJudge = try loadJudge()
        let unusedPins = firstJudge.pinLinesApplyingToNone(of: hosts)
        var settings = DashboardSettings(inventoryPath: fleet.inventories.joined(separator: ", "),
                                         knownHostsFiles: knownHostsFiles, pinFile: pinFiles.first,
                                         readOnly: readOnly,
                                         auditLogPath: auditLog ?? AuditLog.defaultPath(environment: environment))
        settings.missingKnownHostsFiles = Set(fleet.knownHostsFiles.map(expandTilde).filter { !FileManager.default.fileExists(atPath: $0) })
        let pool = ProbePool(settings: fleet.poolSettings)
        let services = DashboardServices(
            prober: pool, judge: LiveFleetJudge(watching: fleet.knownHostsPaths(for: hosts) + pinFiles
                                                             + Set(hosts.flatMap { $0.sshOptions.revokedHostKeys ?? [] }).sorted(),
                                                    hosts: hosts, load: loadJudge),
            write: DashboardWrites(hashNames: await fleet.hashesKnownHosts()).perform,
            connect: ConnectCommand(template: connectCommand, user: user, routeConfig: fleet.sshConfig.map(expandTilde)),
            auditLog: readOnly ? nil : AuditLog(path: settings.auditLogPath),
            user: AuditLog.currentUser(environment: environment),
            history: readOnly ? nil : store.map { HistoryRecorder(store: $0) })
        var state = DashboardState(settings: settings, hosts: hosts, size: TerminalSize(width: 80, height: 24))
        if !unusedPins.isEmpty {
            state.notice = Notice("Warning: pin lines that apply to no inventory host: "
                                  + unusedPins.map { "\(pinFiles.first ?? ""):\($0.number)" }.joined(separator: ", "), isError: true)
        }
        let noColor = !(environment["NO_COLOR"] ?? "").isEmpty
        let ending = await DashboardThread.run(state: state, services: services, theme: chosenTheme, noColor: noColor)
        if case .interrupted(let signal) = ending { throw ExitCode(128 + signal) }
    }
}
