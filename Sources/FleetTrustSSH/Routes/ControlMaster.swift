import Glibc
import Synchronization
import FleetTrustCore

/// One running `ssh` control master: the authenticated connection to one bastion, kept for a
/// whole session (a scan, or every rescan of a dashboard) so the bastion sees one login.
///
/// The user's `ssh` starts it with `ControlPersist=persistSeconds`: once authenticated it goes to
/// the background (the `ssh` we started exits 0) and stays while any client is connected to its
/// socket. We stay connected (`keeper`, an idle multiplexing connection) for as long as we want it,
/// so it never idles out between rescans; and since the kernel closes that connection however
/// fleettrust ends, SIGKILL included, the master then ends by itself `persistSeconds` later. A
/// normal end asks it to stop at once (`stop`, or `LiveMasters` at exit).
///
/// Its log (`ssh -E`) is a file in the scan's private directory, read to say why a hop or a
/// channel failed; `launcher` is the `ssh` we started, kept for its standard error file.
final class ControlMaster: @unchecked Sendable {
    /// How long a master outlives the last connection to it: the bound on how long it survives a
    /// fleettrust that was killed. It must also cover the moment between the master going to the
    /// background and our keeper connecting.
    static let persistSeconds = 2

    let socketPath: String
    let logPath: String
    /// Our connections waiting for this master to accept them.
    private let admission = ChannelAdmission()
    /// The master's own PID (after it went to the background), as it reported it.
    let pid: pid_t
    private let launcher: RouteChild
    private let keeper: Mutex<ControlSocket?>

    private init(socketPath: String, logPath: String, pid: pid_t, launcher: RouteChild, keeper: ControlSocket) {
        self.socketPath = socketPath
        self.logPath = logPath
        self.pid = pid
        self.launcher = launcher
        self.keeper = Mutex(keeper)
    }

    /// What starting a master came to.
    enum Start {
        case ready(ControlMaster)
        /// `ssh` gave up: its exit status and what it logged (for `RouteFailures.jump`).
        case failed(output: String, summary: String)
        case timedOut
        case cancelled
    }

    /// Runs `arguments` (an `ssh -M -S socketPath -E logPath … -o ControlPersist=…`) and waits
    /// until the master listens and reports its PID, `ssh` fails, `deadline` passes or `stop()` says so.
    ///
    /// The `ssh` we start exits as soon as the master listens: with `ControlPersist` it goes to the
    /// background once its socket is in place (`fork_postauth` after `muxserver_listen` in ssh.c),
    /// so its exit is the readiness signal, seen the moment it happens; `stop()` is asked every
    /// `stopCheck` meanwhile.
    static func start(_ arguments: [String], socketPath: String, logPath: String, stderrPath: String,
                      deadline: ContinuousClock.Instant, stopCheck: Duration = .milliseconds(50),
                      stop: () -> Bool) throws(ProbeFailure) -> Start {
        let launcher = try RouteChild(arguments, stdio: nil, stderrPath: stderrPath, ownGroup: false)
        var exited = false
        while true {
            if access(socketPath, F_OK) == 0 {
                do throws(ControlSocket.Failure) {
                    let keeper = try ControlSocket(path: socketPath, deadline: deadline)
                    let pid = try keeper.aliveCheck(deadline: deadline)
                    let master = ControlMaster(socketPath: socketPath, logPath: logPath, pid: pid, launcher: launcher, keeper: keeper)
                    LiveMasters.add(master)
                    return .ready(master)
                } catch {
                    launcher.stop()
                    return .failed(output: Self.output(launcher, logPath), summary: "its control socket did not answer")
                }
            }
            if let status = launcher.exitStatus(), access(socketPath, F_OK) != 0 {
                let output = Self.output(launcher, logPath)
                let summary = RouteFiles.summary(output)
                return .failed(output: output, summary: summary.isEmpty ? "exit status \(status)" : summary)
            }
            if stop() {
                launcher.stop()
                return .cancelled
            }
            if ContinuousClock.now > deadline {
                launcher.stop()
                return .timedOut
            }
            if exited {
                // Gone without a socket: its status comes once it is reaped, in a moment.
                usleep(2_000)
            } else {
                exited = launcher.waitForExit(until: min(deadline, .now + stopCheck))
            }
        }
    }

    /// A channel to `host`:`port` relayed to `descriptor`, over a multiplexing connection of its
    /// own (ssh ties each stdio forward to the connection that asked for it); returns once the
    /// bastion opened it. The connection waits for a place (`ChannelAdmission`) before it connects.
    func openChannel(host: String, port: Int, descriptor: Int32, deadline: ContinuousClock.Instant,
                     cancellation: ProbeCancellation) throws(ControlSocket.Failure) -> ControlSocket {
        guard admission.enter(deadline: deadline, cancellation: cancellation) else {
            throw cancellation.isCancelled ? .cancelled : .timedOut
        }
        var admitted = true
        defer { if admitted { admission.leave() } }
        let channel = try ControlSocket(path: socketPath, deadline: deadline)
        try channel.openForward(host: host, port: port, descriptor: descriptor, deadline: deadline,
                                cancellation: cancellation) {
            admitted = false
            admission.leave()
        }
        return channel
    }

    /// Whether the master still serves (it has not closed our keeper connection); never blocks.
    var isRunning: Bool {
        keeper.withLock { keeper in keeper.map { !$0.isClosedByMaster } ?? false }
    }

    /// Asks the master to end (`MUX_C_TERMINATE`), without waiting; `stop` then waits.
    func requestStop() {
        keeper.withLock { $0?.requestTermination() }
    }

    /// Stops the master and returns once it has closed our connection (its exit), or after
    /// `grace`, when it is killed: while our connection is open its PID is still the master's.
    func stop(grace: Duration = .seconds(2)) {
        defer { LiveMasters.remove(self) }
        keeper.withLock { keeper in
            guard let socket = keeper else { return }
            socket.requestTermination()
            if !socket.awaitClose(deadline: .now + grace) {
                kill(pid, SIGKILL)
                socket.awaitClose(deadline: .now + grace)
            }
            keeper = nil
        }
        launcher.stop()
    }

    /// What the master logged since `offset` (at most 4 KiB), to say why a channel failed.
    func log(from offset: Int) -> String { RouteFiles.read(logPath, from: offset) }

    /// The size of the master's log now: where a channel's own messages will start.
    var logSize: Int { RouteFiles.size(logPath) }

    private static func output(_ launcher: RouteChild, _ logPath: String) -> String {
        launcher.errorOutput() + "\n" + RouteFiles.tail(logPath)
    }

    deinit { stop() }
}
