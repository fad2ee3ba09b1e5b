import ArgumentParser
import FleetTrustCore
import FleetTrustDashboard
import FleetTrustSSH
import Foundation

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

    @OptionGroup var audit: AuditLogOptions

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
        let knownHostsFiles = fleet.knownHosts.all
        let pinFiles = fleet.pinFiles
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
                                         auditLogPath: audit.log.path)
        settings.missingKnownHostsFiles = Set(fleet.knownHosts.files.map(expandTilde).filter { !FileManager.default.fileExists(atPath: $0) })
        let pool = ProbePool(settings: fleet.poolSettings)
        let services = DashboardServices(
            prober: pool, judge: LiveFleetJudge(watching: fleet.trustFiles.watchedPaths(for: hosts), hosts: hosts, load: loadJudge),
            editor: TrustStoreEditor(hashNames: await fleet.hashesKnownHosts()),
            connect: ConnectCommand(template: connectCommand, user: user, routeConfig: fleet.sshConfig.map(expandTilde)),
            auditLog: readOnly ? nil : audit.log,
            user: audit.user,
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
