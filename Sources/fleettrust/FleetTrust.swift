import ArgumentParser
import FleetTrustCore
import FleetTrustDashboard
import FleetTrustSSH
import Foundation

/// `fleettrust --inventory FILE`: the dashboard. Subcommands are the scriptable tools.
@main
struct FleetTrust: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleettrust",
        abstract: "Establish and audit SSH host-key trust across a fleet.",
        discussion: """
            With --inventory, opens the dashboard: every host is probed in the background and its keys \
            checked against your known_hosts files. Press ? inside for the keys. Decisions are appended \
            to an audit log (JSON lines), by default $XDG_STATE_HOME/fleettrust/audit.jsonl or \
            ~/.local/state/fleettrust/audit.jsonl.
            """,
        subcommands: [
            ScanCommand.self,
            DiscoverCommand.self,
            VerifyCommand.self,
        ])

    @OptionGroup var fleet: FleetOptions

    @Option(help: "Theme name (default, light, high-contrast, monochrome) or path to a .theme file.")
    var theme: String = "default"

    @Flag(name: .customLong("read-only"), help: "Never write anything: no trust, pin, forget, no audit log.")
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
    }

    mutating func run() async throws {
        guard !fleet.inventories.isEmpty else { throw CleanExit.helpRequest(self) }
        let environment = ProcessInfo.processInfo.environment
        let hosts = try fleet.loadInventory().hosts
        let knownHostsFiles = fleet.effectiveKnownHostsFiles
        let pinFiles = fleet.pinFiles.map(expandTilde)
        let pinMode = PinMode(rawValue: fleet.pinsMode) ?? .enforce, additionalNames = fleet.additionalNames
        let loadJudge: FleetJudgeAssessor.Loader = {
            let pins = try pinFiles.map { try PinSet.read(path: $0) }
            return FleetJudge(knownHosts: try KnownHosts.read(paths: knownHostsFiles),
                              pins: pins.count <= 1 ? pins.first : PinSet(path: pinFiles.joined(separator: ","), lines: pins.flatMap(\.lines)),
                              pinMode: pinMode, useAdditionalNames: additionalNames)
        }
        do { _ = try loadJudge() } catch { throw CommandFailure.unreadableInput("\(error)") }
        let executable = Bundle.main.executableURL?.path ?? CommandLine.arguments[0]
        let chosenTheme = try Theme.load(theme, searching: Theme.searchDirectories(executable: executable, environment: environment))
        let settings = DashboardSettings(inventoryPath: fleet.inventories.joined(separator: ", "),
                                         knownHostsFiles: knownHostsFiles, pinFile: pinFiles.first,
                                         readOnly: readOnly,
                                         auditLogPath: auditLog ?? AuditLog.defaultPath(environment: environment))
        let pool = ProbePool(settings: .init(concurrency: fleet.concurrency, timeout: .milliseconds(Int(fleet.timeout * 1000))))
        let services = DashboardServices(
            prober: pool, assessor: FleetJudgeAssessor(watching: knownHostsFiles + pinFiles, hosts: hosts, load: loadJudge),
            write: DashboardWrites(hashNames: fleet.hashesKnownHosts).perform,
            connect: ConnectCommand(template: connectCommand, knownHostsFiles: knownHostsFiles, user: user),
            auditLog: readOnly ? nil : AuditLog(path: settings.auditLogPath),
            user: AuditLog.currentUser(environment: environment))
        let state = DashboardState(settings: settings, hosts: hosts, size: TerminalSize(width: 80, height: 24))
        let noColor = !(environment["NO_COLOR"] ?? "").isEmpty
        let ending = await DashboardThread.run(state: state, services: services, theme: chosenTheme, noColor: noColor)
        if case .interrupted(let signal) = ending { throw ExitCode(128 + signal) }
    }
}
