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
        let environment = ProcessInfo.processInfo.environment
        do {
            let theme = try DashboardLaunch.theme(self.theme, environment: environment)
            let hosts = try fleet.loadInventory().hosts
            let store = try await history.open(readOnly: readOnly)
            var settings = DashboardSettings(inventoryPath: fleet.inventory.files.joined(separator: ", "), knownHostsFiles: fleet.knownHosts.all,
                                             pinFile: fleet.pins.path, readOnly: readOnly, auditLogPath: audit.log.path)
            settings.missingKnownHostsFiles = Set(fleet.knownHosts.files.map(expandTilde).filter { !FileManager.default.fileExists(atPath: $0) })
            let launch = DashboardLaunch(
                settings: settings, hosts: hosts, trustFiles: fleet.trustFiles, remembered: try await history.remembered(store, hosts: hosts),
                store: store, prober: ProbePool(settings: fleet.poolSettings),
                connect: ConnectCommand(template: connectCommand, user: user, routeConfig: fleet.sshConfig.map(expandTilde)),
                auditLog: audit.log, user: audit.user, hashNames: await fleet.hashesKnownHosts())
            let ending = try await launch.run(theme: theme, noColor: !(environment["NO_COLOR"] ?? "").isEmpty)
            if case .interrupted(let signal) = ending { throw ExitCode(128 + signal) }
        } catch let problem as DashboardLaunch.Problem {
            printError(problem.description)
            throw ExitCode(64)
        } catch let failure as CommandFailure {
            printError(failure.description)
            throw ExitCode(64)
        }
    }
}
