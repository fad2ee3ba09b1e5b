import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs the command of a `Match exec` from the user's own ssh configuration the way OpenSSH 9.2's
/// `execute_in_shell` does: `$SHELL -c COMMAND` (`/bin/sh` when `SHELL` is unset), stdin and
/// stdout `/dev/null`, this process's environment; the exit status is the answer. `ssh` stops
/// ("match exec … error") when the shell is not executable or the command does not exit
/// normally.
///
/// Bounded as `ssh` is not: a command still running after `timeout` is killed with its whole
/// process group and answers nothing (the host is `unchecked`, naming it). Its stderr is
/// discarded (it must not reach a dashboard's screen), and whatever it left running in its process
/// group once it exits is killed, since a scan runs it for every host.
///
/// Blocks the calling thread until the command is over; the child is started and reaped by
/// `ChildProcess` on threads of its own, so a cooperative caller does not starve it.
public struct MatchExecRunner: Sendable {
    public var timeout: Duration
    /// The environment the command gets and `SHELL` is read from; nil: this process's.
    public var environment: [String: String]?

    public init(timeout: Duration = .seconds(5), environment: [String: String]? = nil) {
        self.timeout = timeout
        self.environment = environment
    }

    /// How one run ended.
    public enum Outcome: Hashable, Sendable {
        /// The command exited with this status: 0 is a match.
        case exited(Int32)
        /// `ssh` stops with a fatal error here: the configuration is refused.
        case sshStops(String)
        /// No answer `ssh` would have had the same way (a timeout): nothing is claimed.
        case unanswered(String)
    }

    /// Runs `command` (already expanded) through the user's shell.
    public func run(_ command: String) -> Outcome {
        let shell = (environment ?? ProcessInfo.processInfo.environment)["SHELL"] ?? "/bin/sh"
        guard access(shell, X_OK) == 0 else {
            return .sshStops("the shell \(InventoryDiagnostic.quote(shell)) is not executable (\(String(cString: strerror(errno))))")
        }
        let discard = open("/dev/null", O_WRONLY | O_CLOEXEC)
        guard discard >= 0 else { return .unanswered("/dev/null cannot be opened (\(String(cString: strerror(errno))))") }
        let child: ChildProcess
        do {
            child = try ChildProcess(shell, ["-c", command], standardError: discard, ownGroup: true, environment: environment)
        } catch {
            return .sshStops("the shell cannot be started (\(error.reason))")
        }
        guard child.waitForExit(until: .now + timeout) else {
            child.stop(grace: .zero)
            return .unanswered("the command did not finish within \(timeout.components.seconds) s (fleettrust waits no longer)")
        }
        child.killGroupRemains()
        child.waitForEnd(until: .now + .seconds(2))
        switch child.ending {
        case .exited(let status): return .exited(status)
        case .signaled(let signal): return .sshStops("the command was ended by signal \(signal)")
        case nil: return .unanswered("the command's exit status could not be read in time")
        }
    }
}
