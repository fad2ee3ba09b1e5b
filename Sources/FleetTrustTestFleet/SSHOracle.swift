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
        // After a failed bare-name retry ssh prints the REVOKED banner yet ends with "No ... host key is known",
        // so that final message is looked for first.
        if transcript.range(of: #"No [A-Z0-9-]+ host key is known for"#, options: .regularExpression) != nil { return .unknown }
        if transcript.contains("was revoked and you have requested strict checking") || transcript.contains(" revoked by file ") { return .revoked }
        return .other
    }
}

// MARK: - Against servers where authentication never happens (FakeKeyServer)

extension SSHOracle {
    /// How one `ssh -o StrictHostKeyChecking=yes` run ended, read from its `-v` messages.
    public enum Finding: String, Sendable, Equatable, CaseIterable {
        /// The host key (or certificate) passed and ssh sent NEWKEYS: `is known and matches the … host key`.
        case accepted
        /// As `accepted`, through `@cert-authority`: `is known and matches the …-CERT host certificate`.
        case acceptedByCA = "accepted-by-ca"
        /// `Host key for … has changed and you have requested strict checking.`
        case changed
        /// `… host key for … was revoked and you have requested strict checking.`
        case revoked
        /// `No … host key is known for … and you have requested strict checking.`
        case unknown
        /// `… differs from the key for the IP address …`
        case ipMismatch = "ip-mismatch"
        /// `ssh_dispatch_run_fatal: … incorrect signature`, or `… error in libcrypto` (what 9.2 prints
        /// when an RSA CA's signature on a certificate does not verify).
        case incorrectSignature = "incorrect-signature"
        /// `ssh_dispatch_run_fatal: … invalid format`: the host key blob does not decode — a truncated
        /// certificate, or one whose RSA CA signature is labelled `ssh-rsa` over a SHA-2 digest.
        case invalidFormat = "invalid-format"
        /// `Unable to negotiate with …: no matching host key type found. Their offer: …`
        case noMatchingHostKeyType = "no-matching-host-key-type"
        /// `… Invalid key length` (an RSA host key under 1024 bits).
        case invalidKeyLength = "invalid-key-length"
        /// Anything else: connection refused, timeout, another fatal error.
        case other

        /// How loudly this outcome alarms: 0 connects, 1 refuses without evidence of an attack
        /// (unknown host, nothing to negotiate, weak key), 2 refuses with evidence of one (a changed
        /// or revoked key, a host key or certificate whose signature does not verify).
        /// `invalid-format` counts as 2: ssh 9.2 prints it both for garbage and for a certificate
        /// whose CA signature is relabelled, so it cannot be told from a forgery.
        public var alarmLevel: Int {
            switch self {
            case .accepted, .acceptedByCA: return 0
            case .unknown, .noMatchingHostKeyType, .invalidKeyLength, .other: return 1
            case .changed, .revoked, .ipMismatch, .incorrectSignature, .invalidFormat: return 2
            }
        }
    }

    /// One run of the real client and what it decided.
    public struct Handshake: Sendable {
        public var finding: Finding
        /// The message the finding was read from (without `debug1: `), e.g.
        /// `Host key for [127.0.0.1]:2222 has changed and you have requested strict checking.`
        public var finalMessage: String
        /// `kex: host key algorithm:` — which of the server's keys ssh met.
        public var hostKeyAlgorithm: String?
        /// What ssh said about a certificate it then dropped (`Certificate invalid: not a host certificate`,
        /// `Certificate signed with disallowed algorithm`, …).
        public var certificateNotes: [String]
        public var transcript: String
    }

    /// Runs `ssh -v -F config -o StrictHostKeyChecking=yes -o BatchMode=yes … host true` and reads
    /// how it ended. `config` is a per-case ssh_config (it names the known_hosts files; the user's
    /// files are never read); `extraOptions` (`-o` values) come first and so win over it.
    public static func handshake(host: String, config: String, extraOptions: [String] = [],
                                 connectTimeout: Int = 10) throws -> Handshake {
        var arguments = ["-v", "-F", config]
        for option in extraOptions + [
            "StrictHostKeyChecking=yes", "BatchMode=yes", "UpdateHostKeys=no", "PubkeyAuthentication=no",
            "PasswordAuthentication=no", "KbdInteractiveAuthentication=no", "IdentityAgent=none",
            "ConnectTimeout=\(connectTimeout)", "ControlMaster=no", "ControlPath=none",
        ] { arguments += ["-o", option] }
        arguments += ["fleettrust-oracle@\(host)", "true"]
        let output = try Tool.run("/usr/bin/ssh", arguments)
        return classifyHandshake(output.stderr)
    }

    /// Reads a `ssh -v` transcript: the last decisive message wins (after a failed bare-name retry
    /// ssh prints the REVOKED banner and then `No … host key is known`, which is the verdict).
    public static func classifyHandshake(_ transcript: String) -> Handshake {
        var result = Handshake(finding: .other, finalMessage: "", hostKeyAlgorithm: nil, certificateNotes: [], transcript: transcript)
        var refusal: (Finding, String)?
        var accepted: (Finding, String)?
        var sentNewKeys = false
        var verificationFailed = false
        var fatal: String?
        var lastLine = ""
        for raw in transcript.split(whereSeparator: { $0.isNewline }) {
            let line = raw.hasPrefix("debug1: ") ? String(raw.dropFirst(8)) : String(raw)
            if !raw.hasPrefix("debug") && !line.isEmpty { lastLine = line }
            if line.hasPrefix("kex: host key algorithm: ") {
                result.hostKeyAlgorithm = String(line.dropFirst("kex: host key algorithm: ".count))
            } else if line.hasPrefix("Certificate ") || line.hasPrefix("Error checking host key") {
                result.certificateNotes.append(line)
            } else if line.contains("is known and matches the") {
                accepted = (line.contains("host certificate") ? .acceptedByCA : .accepted, line)
            } else if line == "matching host key fingerprint found in DNS" {
                // VerifyHostKeyDNS: with a validated record ssh goes straight on (NEWKEYS); otherwise
                // known_hosts decides after it, and its message (or a refusal) follows.
                accepted = (.accepted, line)
            } else if line.hasPrefix("Forcing accepting of host key for loopback/localhost") {
                // NoHostAuthenticationForLocalhost: accepted before known_hosts is read.
                accepted = (.accepted, line)
            } else if line.contains("has changed and you have requested strict checking") {
                refusal = (.changed, line)
            } else if line.contains("was revoked and you have requested strict checking")
                        || (line.hasPrefix("Host key ") && line.contains(" revoked by file ")) {
                // The second is RevokedHostKeys (sshconnect.c verify_host_key), before known_hosts.
                refusal = (.revoked, line)
            } else if line.contains("host key is known for") && line.contains("requested strict checking") {
                refusal = (.unknown, line)
            } else if line.contains("differs from the key for the IP address") {
                refusal = (.ipMismatch, line)
            } else if line.hasPrefix("Unable to negotiate with") {
                refusal = (line.contains("no matching host key type") ? .noMatchingHostKeyType : .other, line)
            } else if line.hasPrefix("ssh_dispatch_run_fatal:") || line.hasPrefix("Bad server host key:") {
                fatal = line
            } else if line.hasPrefix("SSH2_MSG_NEWKEYS sent") {
                sentNewKeys = true
            } else if line == "Host key verification failed." {
                verificationFailed = true
            }
        }
        if let fatal {
            let finding: Finding
            if fatal.hasSuffix("incorrect signature") || fatal.hasSuffix("error in libcrypto") { finding = .incorrectSignature }
            else if fatal.hasSuffix("invalid format") { finding = .invalidFormat }
            else if fatal.hasSuffix("Invalid key length") { finding = .invalidKeyLength }
            else { finding = .other }
            (result.finding, result.finalMessage) = (finding, fatal)
        } else if let refusal, verificationFailed || refusal.0 == .noMatchingHostKeyType || refusal.0 == .other {
            (result.finding, result.finalMessage) = refusal
        } else if sentNewKeys && !verificationFailed, let accepted {
            (result.finding, result.finalMessage) = accepted
        } else if transcript.contains("Permission denied"), !verificationFailed, let accepted {
            (result.finding, result.finalMessage) = accepted
        } else {
            result.finalMessage = lastLine
        }
        return result
    }
}
