import Foundation
import FleetTrustCore

/// Turns what a route's `ssh` or ProxyCommand said on standard error, and how it ended, into a
/// `ProbeFailure` of stage `proxy` with a stable code, naming the hop.
///
/// OpenSSH reports these only as text; the phrases matched are those of OpenSSH 9.2's `ssh`
/// (`sshconnect.c`, `channels.c`, `mux.c`), each one observed against a real `sshd` in the tests.
enum RouteFailures {
    /// Why the `ssh` reaching `hop` (a control master, or a channel through one) gave up.
    static func jump(_ hop: String, output: String, summary: String) -> ProbeFailure {
        let text = output.lowercased()
        let said = summary.isEmpty ? "" : " (ssh: \(summary))"
        if text.contains("host key verification failed") || text.contains("remote host identification has changed")
            || text.contains("host key is known for") || text.contains("revoked") {
            return ProbeFailure(stage: .proxy, code: .bastionKeyNotTrusted,
                                message: "bastion \(hop): ssh does not trust its host key (new, changed or revoked)\(said)")
        }
        if text.contains("permission denied") || text.contains("too many authentication failures") {
            return ProbeFailure(stage: .proxy, code: .bastionAuthFailed,
                                message: "bastion \(hop) refused authentication with your keys\(said)")
        }
        if text.contains("administratively prohibited") || text.contains("stdio forwarding failed")
            || text.contains("open failed") && !text.contains("connect failed") {
            return ProbeFailure(stage: .proxy, code: .forwardingRefused,
                                message: "bastion \(hop) refused to forward the connection (AllowTcpForwarding or PermitOpen)\(said)")
        }
        return ProbeFailure(stage: .proxy, code: .hopUnreachable, message: "hop \(hop) could not be reached\(said)")
    }

    /// The bastion forwarded, but could not connect to the host itself: the host's own failure.
    static func targetRefused(through hop: String, output: String) -> ProbeFailure? {
        guard output.lowercased().contains("connect failed") else { return nil }
        return ProbeFailure(stage: .connect, code: .connectionRefused,
                            message: "bastion \(hop) could not connect to the host (\(Sanitizer.clean(lastLine(output), limit: 160)))")
    }

    static func hopTimeout(_ hop: String) -> ProbeFailure {
        ProbeFailure(stage: .proxy, code: .hopUnreachable, message: "hop \(hop) did not answer within the timeout")
    }

    /// The ProxyCommand failed (exited with a status other than 0) before the host spoke SSH.
    static func command(_ command: String, status: Int32, summary: String) -> ProbeFailure {
        ProbeFailure(stage: .proxy, code: .proxyCommandFailed,
                     message: "ProxyCommand \(Sanitizer.clean(command, limit: 120)) exited with status \(status) before the host spoke SSH"
                         + (summary.isEmpty ? "" : " (\(summary))"))
    }

    /// The connection through a ProxyCommand that did not fail (it exited with status 0, or
    /// still runs) closed before the host identified itself: the far end closed, as a direct
    /// connection closes, which is no failure of the route.
    static func closedBeyondCommand(_ command: String, status: Int32?, summary: String) -> ProbeFailure {
        let how = status == nil ? "still runs" : "exited with status 0"
        return ProbeFailures.closedBeforeBanner("through ProxyCommand \(Sanitizer.clean(command, limit: 120)), which \(how)"
                                                + (summary.isEmpty ? "" : "; it said: \(summary)"))
    }

    private static func lastLine(_ text: String) -> String {
        text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).last.map(String.init) ?? ""
    }
}
