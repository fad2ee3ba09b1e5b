import Foundation

/// The real OpenSSH client as the oracle for trust decisions.
///
/// Runs `ssh -o StrictHostKeyChecking=yes` against a real sshd with the given known_hosts
/// and classifies its final message. Authentication always fails (no credentials are
/// offered), so "Permission denied" means host-key checking passed.
public enum SSHOracle {
    public enum Verdict: String, Sendable, Equatable {
        case trusted, trustedByCA = "trusted-by-ca", changed, revoked, unknown, ipMismatch = "ip-mismatch", other
    }

    public struct Outcome: Sendable {
        public var verdict: Verdict
        public var transcript: String
    }

    /// - Parameters:
    ///   - name: the name given to ssh on its command line (looked up in known_hosts).
    ///   - connectTo: the address to actually connect to (passed as `HostName`), if different.
    public static func check(name: String, port: Int, knownHosts: String, connectTo: String? = nil,
                             extraOptions: [String] = []) throws -> Outcome {
        // ssh takes the first value of an option, so the caller's options go first.
        var arguments = ["-F", "/dev/null", "-v"] + extraOptions + [
                         "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes",
                         "-o", "UserKnownHostsFile=\(knownHosts)", "-o", "GlobalKnownHostsFile=/dev/null",
                         "-o", "UpdateHostKeys=no", "-o", "PubkeyAuthentication=no",
                         "-o", "PasswordAuthentication=no", "-o", "KbdInteractiveAuthentication=no",
                         "-o", "ConnectTimeout=10", "-p", String(port)]
        if let connectTo { arguments += ["-o", "HostName=\(connectTo)"] }
        arguments += ["fleettrust-oracle@\(name)", "true"]
        let output = try Tool.run("/usr/bin/ssh", arguments)
        return Outcome(verdict: classify(output.stderr), transcript: output.stderr)
    }

    public static func classify(_ transcript: String) -> Verdict {
        if transcript.contains("Permission denied") {
            return transcript.contains("host certificate") && transcript.contains("is known and matches") &&
                transcript.range(of: #"matches the [A-Z0-9]+-CERT host certificate"#, options: .regularExpression) != nil
                ? .trustedByCA : .trusted
        }
        if transcript.contains("differs from the key for the IP address") { return .ipMismatch }
        if transcript.contains("REMOTE HOST IDENTIFICATION HAS CHANGED") { return .changed }
        if transcript.contains("was revoked and you have requested strict checking") { return .revoked }
        // After a failed bare-name retry ssh prints the REVOKED banner yet ends with "No ... host key is known".
        if transcript.range(of: #"No [A-Z0-9-]+ host key is known for"#, options: .regularExpression) != nil { return .unknown }
        return .other
    }
}
