import FleetTrustCore
import Foundation

/// What the dashboard command gathered from its options, turned into a running dashboard: the
/// terminal and theme checked, the one judge wired to the trust files it watches, the editor, audit
/// log and history recorder (none of them in read-only mode), and the first notice.
public struct DashboardLaunch {
    public var settings: DashboardSettings
    public var hosts: [InventoryHost]
    public var trustFiles: TrustFiles
    /// What the history remembers of the hosts (nil: no drift); `store` records new probes.
    public var remembered: FleetHistory?
    public var store: HistoryStore?
    public var prober: any FleetProber
    public var connect: ConnectCommand
    public var auditLog: AuditLog
    public var user: String
    /// Write new known_hosts names hashed when a host's configuration does not say.
    public var hashNames: Bool
    /// A recording (`--replay`): the other scanners' views of each host that disagree with its
    /// own, and what the status line says first.
    public var splitViews: [Int: [SplitViewWitness]] = [:]
    public var notice: String?

    public init(settings: DashboardSettings, hosts: [InventoryHost], trustFiles: TrustFiles, remembered: FleetHistory?,
                store: HistoryStore?, prober: any FleetProber, connect: ConnectCommand, auditLog: AuditLog, user: String, hashNames: Bool) {
        self.settings = settings
        self.hosts = hosts
        self.trustFiles = trustFiles
        self.remembered = remembered
        self.store = store
        self.prober = prober
        self.connect = connect
        self.auditLog = auditLog
        self.user = user
        self.hashNames = hashNames
    }

    /// Why the dashboard cannot open (a theme, the terminal, a trust file), in one sentence.
    public struct Problem: Error, CustomStringConvertible {
        public var description: String
    }

    /// The theme named (or a `.theme` file) looked up where `make install` put them, and the
    /// terminal checked, before any file is read.
    public static func theme(_ name: String, environment: [String: String]) throws(Problem) -> Theme {
        let executable = Bundle.main.executableURL?.path ?? CommandLine.arguments[0]
        do {
            let theme = try Theme.load(name, searching: Theme.searchDirectories(executable: executable, environment: environment))
            try CursesTerminal.check(environment: environment)
            return theme
        } catch {
            throw Problem(description: "\(error)")
        }
    }

    /// Runs the dashboard on its own thread until the person quits (or a signal ends it).
    public func run(theme: Theme, noColor: Bool) async throws(Problem) -> DashboardDriver.Ending {
        let (trustFiles, hosts, remembered) = (trustFiles, hosts, remembered)
        let load: LiveFleetJudge.Loader = {
            var judge = try trustFiles.judge(for: hosts)
            judge.history = remembered
            return judge
        }
        let unusedPins: [PinLine]
        let ignoredLines: [String]
        do {
            let judge = try load()
            unusedPins = judge.pinLinesApplyingToNone(of: hosts)
            ignoredLines = IgnoredKnownHostsLines.warnings(judge.knownHosts)
        } catch { throw Problem(description: "\(error)") }
        let readOnly = settings.readOnly
        let services = DashboardServices(
            prober: prober, judge: LiveFleetJudge(watching: trustFiles.watchedPaths(for: hosts), hosts: hosts, splitViews: splitViews, load: load),
            editor: TrustStoreEditor(hashNames: hashNames), connect: connect, auditLog: readOnly ? nil : auditLog, user: user,
            history: readOnly ? nil : store.map { HistoryRecorder(store: $0) })
        var state = DashboardState(settings: settings, hosts: hosts, size: TerminalSize(width: 80, height: 24))
        if let notice { state.notice = Notice(notice) }
        if !unusedPins.isEmpty {
            let pinFile = trustFiles.pinFile ?? ""
            state.notice = Notice("Warning: pin lines that apply to no inventory host: "
                                  + unusedPins.map { "\(pinFile):\($0.number)" }.joined(separator: ", "), isError: true)
        }
        // A warning printed before the screen opens is never seen: the first notice says it.
        if !ignoredLines.isEmpty {
            state.notice = Notice(([state.notice?.text.value].compactMap { $0 } + ignoredLines).joined(separator: "\n"), isError: true)
        }
        return await DashboardThread.run(state: state, services: services, theme: theme, noColor: noColor)
    }
}
