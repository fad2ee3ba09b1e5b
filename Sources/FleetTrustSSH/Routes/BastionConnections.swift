import Foundation
import Glibc
import Synchronization
import FleetTrustCore

/// The authenticated connections to the bastions of one session (a scan, or a dashboard with all
/// its rescans): one `ssh` control master per hop chain, started as soon as a scan names a host
/// behind it (`startMasters`) so that its login overlaps everything else, shared by every probe
/// behind it, and stopped when the session ends (`close`), when fleettrust exits (`LiveMasters`),
/// or a moment after fleettrust is killed (`ControlMaster`).
///
/// The user's own `ssh` reaches each bastion, so the hop is resolved through ssh_config, and
/// authenticated with the user's keys, agent and certificates, exactly as `ssh` would; it runs
/// with `StrictHostKeyChecking=yes` and `BatchMode=yes`, so a bastion whose key known_hosts does
/// not vouch for (new, changed, revoked) stops its route instead of being asked about. A chain
/// `a,b` reaches `b` through `a`'s master, so each bastion is authenticated to once per session
/// and each is checked by a master of its own. Every probe then asks the master for one
/// `direct-tcpip` channel over its multiplexing socket (`ControlSocket`: no process per probe)
/// and runs its key exchange through it, end to end: the bastion relays bytes and never vouches
/// for the host's keys. A master that ended (the bastion went away) is started again when next needed.
public final class BastionConnections: Sendable {
    public struct Settings: Sendable, Hashable {
        /// The `ssh` client to run.
        public var ssh: String
        /// The ssh_config hops are resolved through (`-F`) for hosts not from an ssh_config
        /// inventory (whose own file is used); nil: ssh's default (~/.ssh/config).
        public var configFile: String?

        public init(ssh: String = "/usr/bin/ssh", configFile: String? = nil) {
            self.ssh = ssh
            self.configFile = configFile
        }
    }

    /// The hops up to one bastion, and the ssh_config they are resolved through.
    struct Chain: Hashable, Sendable {
        var configFile: String?
        var hops: [JumpHost]

        var bastion: JumpHost { hops[hops.count - 1] }
        var earlier: Chain { Chain(configFile: configFile, hops: Array(hops.dropLast())) }
        var label: String { hops.map(\.description).joined(separator: ",") }
    }

    private enum Entry {
        case starting
        case ready(ControlMaster)
        case failed(ProbeFailure)
    }

    private struct State {
        var entries: [Chain: Entry] = [:]
        var files = 0
        var closed = false
        /// A private (0700) directory for the control sockets, logs and error output, made when
        /// the first master starts; nil before (and when it could not be made).
        var directory: String?
    }

    public let settings: Settings
    let timeout: Duration
    private let state = Mutex(State())
    /// Signalled when a master has started or failed: the probes waiting for it sleep on it
    /// instead of polling (a hundred threads polling slow the login they wait for).
    private let settled = NSCondition()

    public init(settings: Settings, timeout: Duration) {
        self.settings = settings
        self.timeout = timeout
    }

    private static func makeDirectory() -> String? {
        var template = Array("/tmp/fleettrust-routes-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { buffer in
            mkdtemp(buffer.baseAddress!).map { String(cString: $0) }
        }
    }

    /// The chain of bastions `ssh` passes to reach `host` (its `ProxyJump` hops).
    func chain(for host: InventoryHost) -> Chain {
        Chain(configFile: host.sshConfigFile ?? settings.configFile, hops: host.route.jumpHosts)
    }

    /// Starts, each on a thread of its own, the masters that the hosts of a scan about to begin
    /// will be probed through, so that each login (the bastion's key exchange and authentication,
    /// a few tenths of a second) runs beside everything else: the direct hosts' probes, the
    /// scan's setting up, the probes ahead of the first routed one. Those probes then wait for
    /// their master as for one they started. A master already running or starting is left alone
    /// (a dashboard's rescan logs in to nothing); one that ended is started again; a host that is
    /// not probed through a master (refused, a ProxyCommand, a TLS endpoint) starts nothing.
    public func startMasters(for hosts: [InventoryHost]) {
        let chains = Set(hosts.filter(Self.goesThroughAMaster).map(chain(for:)))
        let wanted = state.withLock { state in
            chains.filter { chain in
                switch state.entries[chain] {
                case nil: return !state.closed
                case .ready(let master): return !master.isRunning
                case .starting, .failed: return false
                }
            }
        }
        for chain in wanted {
            Thread.detachNewThread { [self] in
                _ = master(for: chain, cancellation: ProbeCancellation())
            }
        }
    }

    /// Whether the probe of `host` asks a control master for its channels (see `RoutedTarget`
    /// and `HostProbe.run`): a host with `ProxyJump` hops that is probed at all.
    private static func goesThroughAMaster(_ host: InventoryHost) -> Bool {
        guard host.refusal == nil, host.endpointProtocol == .ssh, !host.route.jumpHosts.isEmpty else { return false }
        if case .command? = host.route.hops.first { return false }
        return (try? SSHDestination(host)) != nil
    }

    /// A fresh path in the private directory (`err-N` for a child's standard error, `m-N` for a
    /// socket, `log-N` for a master's log); nil when the directory cannot be made.
    func freshPath(_ prefix: String = "err") -> String? {
        state.withLock { state in
            if state.directory == nil { state.directory = Self.makeDirectory() }
            state.files += 1
            return state.directory.map { "\($0)/\(prefix)-\(state.files)" }
        }
    }

    /// The arguments of an `ssh` that opens one channel to `target` (`host:port`, ssh's `%h:%p`
    /// here) through `chain`'s master: how a further hop's master reaches its bastion. Should the
    /// master be gone, `ProxyCommand=false` makes it fail rather than log in again.
    func channelArguments(socket: String, chain: Chain, target: String) -> [String] {
        [settings.ssh] + configArguments(chain) + [
            "-S", socket, "-o", "ControlMaster=no", "-o", "ProxyCommand=false", "-o", "BatchMode=yes",
            "-W", target, "--", chain.bastion.hostName.value,
        ]
    }

    /// `chain`'s master, starting it (and its earlier hops' masters) on first use, or again
    /// when it has ended; a chain that failed fails every later request at once, so nothing more
    /// is sent its way.
    func master(for chain: Chain, cancellation: ProbeCancellation) -> Result<ControlMaster, ProbeFailure> {
        while true {
            enum Next { case done(Result<ControlMaster, ProbeFailure>), wait, start(ended: ControlMaster?) }
            let next: Next = state.withLock { state in
                if state.closed { return .done(.failure(ProbeFailures.cancelled)) }
                switch state.entries[chain] {
                case .ready(let master):
                    if master.isRunning { return .done(.success(master)) }
                    state.entries[chain] = .starting
                    return .start(ended: master)
                case .failed(let failure): return .done(.failure(failure))
                case .starting: return .wait
                case nil:
                    state.entries[chain] = .starting
                    return .start(ended: nil)
                }
            }
            switch next {
            case .done(let result):
                return result
            case .wait:
                if cancellation.isCancelled { return .failure(ProbeFailures.cancelled) }
                // Checked again under the condition's lock, which the starter takes to signal:
                // a start that ends between the two checks cannot be missed.
                settled.lock()
                if state.withLock({ if case .starting? = $0.entries[chain] { true } else { false } }) {
                    _ = settled.wait(until: Date(timeIntervalSinceNow: 0.1))
                }
                settled.unlock()
            case .start(let ended):
                ended?.stop()
                let entry = start(chain, cancellation: cancellation)
                let stale: ControlMaster? = state.withLock { state in
                    if case .failed(let failure) = entry, failure.stage == .cancelled {
                        state.entries[chain] = nil
                    } else {
                        state.entries[chain] = entry
                    }
                    if state.closed, case .ready(let master) = entry { return master }
                    return nil
                }
                settled.lock()
                settled.broadcast()
                settled.unlock()
                stale?.stop()
                switch entry {
                case .ready(let master): return .success(master)
                case .failed(let failure): return .failure(failure)
                case .starting: continue
                }
            }
        }
    }

    private func start(_ chain: Chain, cancellation: ProbeCancellation) -> Entry {
        guard let socket = freshPath("m"), let log = freshPath("log"), let errors = freshPath() else {
            return .failed(ProbeFailure(stage: .proxy, code: .hopUnreachable,
                                        message: "cannot create a private directory for the bastion connections"))
        }
        var proxy: [String] = []
        if chain.hops.count > 1 {
            switch master(for: chain.earlier, cancellation: cancellation) {
            case .failure(let failure): return .failed(failure)
            case .success(let earlier):
                // ssh expands %h and %p to this hop's HostName and Port before the shell runs it;
                // any other `%` (in a path) is literal.
                let target = "[%h]:%p"
                let inner = channelArguments(socket: earlier.socketPath, chain: chain.earlier, target: target)
                    .map { Self.shellQuoted($0 == target ? $0 : $0.replacingOccurrences(of: "%", with: "%%")) }
                    .joined(separator: " ")
                proxy = ["-o", "ProxyCommand=\(inner)"]
            }
        }
        let seconds = max(1, Int(timeout.seconds.rounded(.up)))
        let bastion = chain.bastion
        let arguments = [settings.ssh] + configArguments(chain) + [
            "-M", "-S", socket, "-E", log, "-N", "-T", "-o", "ControlPersist=\(ControlMaster.persistSeconds)",
            "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "-o", "ClearAllForwardings=yes",
            "-o", "ConnectTimeout=\(seconds)",
        ] + proxy + (bastion.userName.map { ["-l", $0.value] } ?? []) + (bastion.port.map { ["-p", String($0)] } ?? [])
            + ["--", bastion.hostName.value]
        let hop = Sanitizer.clean(bastion.description, limit: 120)
        let started: ControlMaster.Start
        do {
            started = try ControlMaster.start(arguments, socketPath: socket, logPath: log, stderrPath: errors,
                                              deadline: .now + timeout + .seconds(2)) {
                cancellation.isCancelled || state.withLock { $0.closed }
            }
        } catch {
            return .failed(error)
        }
        switch started {
        case .ready(let master): return .ready(master)
        case .failed(let output, let summary): return .failed(RouteFailures.jump(hop, output: output, summary: summary))
        case .timedOut: return .failed(RouteFailures.hopTimeout(hop))
        case .cancelled: return .failed(ProbeFailures.cancelled)
        }
    }

    private func configArguments(_ chain: Chain) -> [String] {
        chain.configFile.map { ["-F", $0] } ?? []
    }

    static func shellQuoted(_ word: String) -> String {
        "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Stops every master and removes the private directory. Requests after this fail as cancelled.
    public func close() {
        let (masters, directory): ([ControlMaster], String?) = state.withLock { state in
            state.closed = true
            defer { state.entries = [:] }
            return (state.entries.values.compactMap { if case .ready(let master) = $0 { master } else { nil } }, state.directory)
        }
        // All told at once, then each awaited: the waits overlap, so closing costs one grace period.
        for master in masters { master.requestStop() }
        for master in masters { master.stop() }
        if let directory { try? FileManager.default.removeItem(atPath: directory) }
    }

    deinit { close() }
}
