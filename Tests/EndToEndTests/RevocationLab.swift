import FleetTrustCore
import FleetTrustTestFleet
import Foundation

/// One real `sshd` on 127.0.0.1 serving an Ed25519 key, an RSA key and a host certificate for
/// the Ed25519 key (serial 42, key id `web-42`, from a CA), and the real `ssh` run against it as
/// the oracle for revocations: known_hosts `@revoked` lines and `RevokedHostKeys` files.
final class RevocationLab: @unchecked Sendable {
    /// What the real `ssh -o StrictHostKeyChecking=yes` did with the server's key.
    enum Answer: Equatable, CustomStringConvertible {
        /// The key was accepted: ssh went on to authenticate (and was refused, having no credentials).
        case accepted
        /// `RevokedHostKeys` revoked it ("revoked by file").
        case revokedByFile
        /// A known_hosts `@revoked` line revoked it.
        case revokedByKnownHosts
        /// ssh could not use the `RevokedHostKeys` file and failed the connection.
        case fileError
        case other(String)

        var description: String {
            switch self {
            case .accepted: return "accepted"
            case .revokedByFile: return "revoked by file"
            case .revokedByKnownHosts: return "revoked by known_hosts"
            case .fileError: return "revocation file error"
            case .other(let text): return "other: \(text)"
            }
        }
    }

    let directory: String
    private(set) var port = 0
    let ed25519: HostKey, rsa: HostKey, spare: HostKey, authority: HostKey
    let certificate: HostKey
    private var server: SpawnedProcess?

    init() throws {
        let directory = NSTemporaryDirectory() + "ft-revocation-lab-\(getpid())-\(UUID().uuidString.prefix(8))"
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        func keygen(_ name: String, _ args: [String]) throws -> HostKey {
            _ = try Tool.run("/usr/bin/ssh-keygen", ["-q", "-N", "", "-f", directory + "/" + name] + args)
            return try HostKey(openSSHLine: String(contentsOfFile: directory + "/\(name).pub", encoding: .utf8))
        }
        ed25519 = try keygen("host_ed25519", ["-t", "ed25519"])
        rsa = try keygen("host_rsa", ["-t", "rsa", "-b", "2048"])
        spare = try keygen("spare", ["-t", "ed25519"])
        authority = try keygen("ca", ["-t", "ed25519"])
        _ = try Tool.run("/usr/bin/ssh-keygen", ["-q", "-s", directory + "/ca", "-I", "web-42", "-z", "42", "-h", "-n", "127.0.0.1",
                                                 directory + "/host_ed25519.pub"])
        certificate = try HostKey(openSSHLine: String(contentsOfFile: directory + "/host_ed25519-cert.pub", encoding: .utf8))
        try startServer()
    }

    deinit { stop() }

    func stop() {
        server?.terminate()
        server = nil
        try? FileManager.default.removeItem(atPath: directory)
    }

    func path(_ name: String) -> String { directory + "/" + name }

    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        try text.write(toFile: path(name), atomically: true, encoding: .utf8)
        return path(name)
    }

    /// The name `ssh` and fleettrust look the server up under.
    var knownHostsName: String { "[127.0.0.1]:\(port)" }

    /// `ssh-keygen -k` from a specification (`-s CA`, or `-s none` for any CA, when asked).
    func krl(_ name: String, _ specification: String, authority: String? = nil) throws -> String {
        let spec = try write(name + ".spec", specification)
        let output = path(name + ".krl")
        let run = try Tool.run("/usr/bin/ssh-keygen", ["-k", "-f", output] + (authority.map { ["-s", $0] } ?? []) + [spec])
        guard run.status == 0 else { throw TrustTool.Failure("ssh-keygen -k failed: \(run.stderr)") }
        return output
    }

    /// Runs an `ssh` argument vector (its last words: the destination and `true`) and reads its answer.
    static func answer(_ arguments: [String]) throws -> (Answer, String) {
        let output = try Tool.run(arguments[0], Array(arguments.dropFirst()))
        let text = output.stderr
        if text.contains("revoked by file") { return (.revokedByFile, text) }
        if text.contains("Error checking host key") { return (.fileError, text) }
        if text.contains("is marked as revoked") || text.contains("was revoked and you have requested strict checking") {
            return (.revokedByKnownHosts, text)
        }
        if text.contains("Permission denied") { return (.accepted, text) }
        return (.other(text), text)
    }

    /// The real client, strict, with these known_hosts, algorithm and `RevokedHostKeys`.
    func ssh(knownHosts: String, algorithm: String, revokedHostKeys: String?) throws -> (Answer, String) {
        var arguments = ["/usr/bin/ssh", "-F", "/dev/null", "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes",
                         "-o", "UserKnownHostsFile=\(knownHosts)", "-o", "GlobalKnownHostsFile=/dev/null",
                         "-o", "HostKeyAlgorithms=\(algorithm)", "-o", "PubkeyAuthentication=no", "-o", "PasswordAuthentication=no",
                         "-o", "KbdInteractiveAuthentication=no", "-o", "UpdateHostKeys=no", "-o", "ConnectTimeout=10"]
        if let revokedHostKeys { arguments += ["-o", "RevokedHostKeys=\(revokedHostKeys)"] }
        return try Self.answer(arguments + ["-p", String(port), "fleettrust-test@127.0.0.1", "true"])
    }

    private func startServer() throws {
        try FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
        for _ in 0..<20 {
            let candidate = Int.random(in: 20000...60000)
            let config = try write("sshd.conf", """
                ListenAddress 127.0.0.1:\(candidate)
                HostKey \(directory)/host_ed25519
                HostKey \(directory)/host_rsa
                HostCertificate \(directory)/host_ed25519-cert.pub
                UsePAM no
                StrictModes no
                PidFile none
                MaxStartups 1000:30:2000
                LogLevel ERROR
                LoginGraceTime 20

                """)
            let process = try SpawnedProcess("/usr/sbin/sshd", ["-D", "-e", "-f", config])
            if TrustTool.waitForListener(port: candidate, server: process) {
                server = process
                port = candidate
                return
            }
            process.terminate()
        }
        throw TrustTool.Failure("sshd did not start")
    }
}
