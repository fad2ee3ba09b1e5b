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

    @Flag(name: .customLong("create"), help: "Let `t` create a --known-hosts file that does not exist yet (without it, a missing file is taken for a typo and refused).")
    var create = false

    @OptionGroup var audit: AuditLogOptions

    @Option(name: .customLong("connect-command"),
            help: "Command for `c`: placeholders {options} {port} {target} {host} {name}.")
    var connectCommand: String = ConnectCommand.defaultTemplate

    @Option(help: "Login user for `c` when the inventory names none.")
    var user: String?

    @Option(help: ArgumentHelp("Open a recorded `scan --format json` document (or a merged one) instead of an inventory: its proof is judged against your files, nothing is probed.",
                               valueName: "file"))
    var replay: String?

    @Flag(name: .customLong("trust-on-first-use"),
          help: "With --replay: let t save a new host's recorded keys no pin proves (as scan --replay --format known-hosts --trust-on-first-use).")
    var trustOnFirstUse = false

    func validate() throws {
        try fleet.validateShared()
        if replay != nil && !fleet.inventory.files.isEmpty { throw ValidationError("--replay opens a recorded scan; it takes no --inventory") }
        if fleet.inventory.files.isEmpty && replay == nil { throw ValidationError("give an inventory with --inventory FILE") }
        try history.validateHistory()
        if trustOnFirstUse && replay == nil {
            throw ValidationError("--trust-on-first-use goes with --replay (t on a live dashboard trusts what this machine proved)")
        }
    }

    mutating func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        do {
            let theme = try DashboardLaunch.theme(self.theme, environment: environment)
            let recording = try replay.map { try DashboardRecording(path: $0, file: expandTilde($0), under: try fleet.replayConfiguration()) }
            let hosts = try recording?.hosts ?? fleet.loadInventory().hosts
            // A recording is an old probe: no drift against today's history, and nothing recorded.
            let store = recording == nil ? try await history.open(readOnly: readOnly) : nil
            var settings = DashboardSettings(inventoryPath: replay ?? fleet.inventory.files.joined(separator: ", "), knownHostsFiles: fleet.knownHosts.all,
                                             pinFile: fleet.pins.path, readOnly: readOnly, auditLogPath: audit.log.path)
            settings.missingKnownHostsFiles = Set(fleet.knownHosts.files.map(expandTilde).filter { !FileManager.default.fileExists(atPath: $0) })
            settings.createsMissingKnownHosts = create
            settings.recording = replay
            settings.trustsRecordingOnFirstUse = trustOnFirstUse
            var launch = DashboardLaunch(
                settings: settings, hosts: hosts, trustFiles: fleet.trustFiles,
                remembered: recording == nil ? try await history.remembered(store, hosts: hosts) : nil,
                store: store, prober: recording?.prober ?? ProbePool(settings: fleet.probeSettings(for: hosts)),
                connect: ConnectCommand(template: connectCommand, user: user, routeConfig: fleet.sshConfig.map(expandTilde),
                                        followsProbedRoute: recording == nil),
                auditLog: audit.log, user: audit.user, hashNames: await fleet.hashKnownHosts.hashes())
            launch.splitViews = recording?.splitViews ?? [:]
            launch.notice = recording?.notice
            let ending = try await launch.run(theme: theme, noColor: !(environment["NO_COLOR"] ?? "").isEmpty)
            if case .interrupted(let signal) = ending { throw ExitCode(128 + signal) }
        } catch let problem as DashboardLaunch.Problem {
            printError(problem.description)
            throw ExitCode(64)
        } catch let failure as CommandFailure {
            printError(failure.description)
            throw ExitCode(64)
        } catch let problem as ScanReplay.Problem {
            printError(problem.description)
            throw ExitCode(64)
        }
    }
}
