import Foundation
import Glibc
import FleetTrustCore

/// One child process of a route: the `ssh` that starts a control master to a bastion, the
/// `ssh -W` channel a further hop's master is reached through, or a ProxyCommand.
///
/// Started synchronously from the probe's dedicated thread through `ChildProcess` (swift-subprocess
/// spawns it and reaps it; `init` returns as soon as it has the PID), then polled (`exitStatus`)
/// and stopped (`stop`) from blocking probe code. Its standard input and output are one end of a
/// socketpair (the probe keeps the other; the caller closes its copy of this one) or /dev/null;
/// its signals start at their default dispositions, none blocked. Each runs in a process group of
/// its own, so stopping it stops whatever it started too (the `ssh` of a ProxyCommand pipeline);
/// it is signalled while its pidfd says it has not exited, never by name. Its standard error goes
/// to a file in the scan's private directory (created 0600, truncated), read once it has exited
/// to say why a hop failed.
///
/// The `ssh` starting a control master is the exception: it stays in fleettrust's process group,
/// so a Ctrl-C at the terminal stops it while it is still logging in; once logged in, the master
/// goes to the background and `ControlMaster` answers for it.
final class RouteChild: @unchecked Sendable {
    let stderrPath: String
    private let process: ChildProcess

    var pid: pid_t { process.pid }

    /// Starts `argv` with `stdio` (or /dev/null) as standard input and output; `ownGroup: false`
    /// for the `ssh` of a control master, which must share fleettrust's fate while it logs in.
    init(_ argv: [String], stdio: Int32?, stderrPath: String, ownGroup: Bool = true) throws(ProbeFailure) {
        let command = Sanitizer.clean(argv[0], limit: 80)
        let errorFile = open(stderrPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard errorFile >= 0 else {
            throw ProbeFailure(stage: .proxy, code: .proxyCommandFailed,
                               message: "cannot run \(command): \(stderrPath): \(String(cString: strerror(errno)))")
        }
        do {
            process = try ChildProcess(argv[0], Array(argv.dropFirst()), standardIO: stdio,
                                       standardError: errorFile, ownGroup: ownGroup)
        } catch {
            throw ProbeFailure(stage: .proxy, code: .proxyCommandFailed,
                               message: "cannot run \(command): \(Sanitizer.clean(error.reason, limit: 200))")
        }
        self.stderrPath = stderrPath
    }

    /// The exit status (a signal as 128 + its number) once the child has exited and been reaped,
    /// nil while it runs; never blocks.
    func exitStatus() -> Int32? {
        switch process.ending {
        case .exited(let code)?: code
        case .signaled(let signal)?: 128 + signal
        // A run that threw once the child was started has still reaped it; its status is lost.
        case nil: process.hasEnded ? 128 + SIGKILL : nil
        }
    }

    /// Waits until the child has exited (it may not be reaped yet) or `deadline` passes; true
    /// once it has exited. Woken by the exit itself (its pidfd), not by polling.
    func waitForExit(until deadline: ContinuousClock.Instant) -> Bool {
        process.waitForExit(until: deadline)
    }

    /// Asks the child (its group when it leads one) to end, without waiting: `stop` then waits.
    func requestStop() {
        process.signal(SIGTERM)
    }

    /// Stops the child's whole process group (SIGTERM, then SIGKILL after `grace`) and returns
    /// once it has exited and (see `ChildProcess.stop`) been reaped.
    func stop(grace: Duration = .milliseconds(300)) {
        process.stop(grace: grace)
    }

    /// The end (at most 4 KiB) of what the child wrote to standard error, as written.
    func errorOutput() -> String { RouteFiles.tail(stderrPath) }

    /// The last lines of `errorOutput`, cleaned to one line of at most `limit` characters.
    func errorText(limit: Int = 300) -> String { RouteFiles.summary(errorOutput(), limit: limit) }

    deinit {
        if !process.hasEnded { stop() }
        unlink(stderrPath)
    }
}
