import Foundation
import FleetTrustCore
import FleetTrustTestFleet
import XCTest

/// Real `sshd` processes on 127.0.0.1 serving one set of host keys with several host
/// certificates, and the real `ssh` client as the oracle for known_hosts verdicts.
///
/// `ssh` reaches the servers through a ProxyCommand relay, so the name and port it looks
/// up are free (`-p 22` included) and no name resolution is needed.
final class TrustOracleLab: @unchecked Sendable {
    enum CertificateVariant: String, CaseIterable {
        case valid, expired, notYetValid, otherPrincipal, emptyPrincipals, wildcardPrincipal, upperCasePrincipal, sha1CA
    }

    let directory: URL
    let served: [String: HostKey]          // "ed25519", "ecdsa", "rsa"
    let spare: [String: HostKey]           // keys no server holds
    let authority: HostKey, otherAuthority: HostKey, rsaAuthority: HostKey
    private(set) var certificates: [CertificateVariant: HostKey] = [:]
    private(set) var ports: [CertificateVariant: Int] = [:]
    private var servers: [SpawnedProcess] = []

    init() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ft-trust-lab-\(getpid())-\(UUID().uuidString.prefix(8))")
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        func keygen(_ name: String, _ args: [String]) throws -> HostKey {
            let path = directory.appendingPathComponent(name).path
            _ = try TrustTool.run("/usr/bin/ssh-keygen", ["-q", "-N", "", "-f", path] + args)
            return try HostKey(openSSHLine: String(contentsOfFile: path + ".pub", encoding: .utf8))
        }
        served = ["ed25519": try keygen("host_ed25519", ["-t", "ed25519"]),
                  "ecdsa": try keygen("host_ecdsa", ["-t", "ecdsa", "-b", "256"]),
                  "rsa": try keygen("host_rsa", ["-t", "rsa", "-b", "2048"])]
        spare = ["ed25519": try keygen("spare_ed25519", ["-t", "ed25519"]),
                 "ecdsa384": try keygen("spare_ecdsa384", ["-t", "ecdsa", "-b", "384"]),
                 "rsa": try keygen("spare_rsa", ["-t", "rsa", "-b", "2048"]),
                 "dsa": try keygen("spare_dsa", ["-t", "dsa"])]
        authority = try keygen("ca", ["-t", "ed25519"])
        otherAuthority = try keygen("ca2", ["-t", "ed25519"])
        rsaAuthority = try keygen("ca_rsa", ["-t", "rsa", "-b", "2048"])
        try writeRelay()
        for variant in CertificateVariant.allCases {
            certificates[variant] = try sign(variant)
            ports[variant] = try startServer(variant)
        }
    }

    deinit { stop() }

    func stop() {
        servers.forEach { $0.terminate() }
        servers = []
        try? FileManager.default.removeItem(at: directory)
    }

    private func sign(_ variant: CertificateVariant) throws -> HostKey {
        let base = directory.appendingPathComponent("host_ed25519").path
        let copy = directory.appendingPathComponent("cert_\(variant.rawValue)").path
        try? FileManager.default.removeItem(atPath: copy + ".pub")
        try FileManager.default.copyItem(atPath: base + ".pub", toPath: copy + ".pub")
        var ca = directory.appendingPathComponent("ca").path
        var args: [String] = []
        switch variant {
        case .valid: args = ["-n", "foo.example,127.0.0.1,bar.example"]
        case .expired: args = ["-n", "foo.example", "-V", "20200101:20210101"]
        case .notYetValid: args = ["-n", "foo.example", "-V", "20990101:21000101"]
        case .otherPrincipal: args = ["-n", "other.example"]
        case .emptyPrincipals: args = []
        case .wildcardPrincipal: args = ["-n", "*.example"]
        case .upperCasePrincipal: args = ["-n", "Foo.Example"]
        case .sha1CA:
            ca = directory.appendingPathComponent("ca_rsa").path
            args = ["-n", "foo.example", "-t", "ssh-rsa"]
        }
        _ = try TrustTool.run("/usr/bin/ssh-keygen", ["-q", "-s", ca, "-I", variant.rawValue, "-h"] + args + [copy + ".pub"])
        return try HostKey(openSSHLine: String(contentsOfFile: copy + "-cert.pub", encoding: .utf8))
    }

    private func startServer(_ variant: CertificateVariant) throws -> Int {
        try FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
        for _ in 0..<20 {
            let port = Int.random(in: 20000...60000)
            let config = directory.appendingPathComponent("sshd_\(variant.rawValue).conf").path
            let d = directory.path
            try """
            ListenAddress 127.0.0.1:\(port)
            HostKey \(d)/host_ed25519
            HostKey \(d)/host_ecdsa
            HostKey \(d)/host_rsa
            HostCertificate \(d)/cert_\(variant.rawValue)-cert.pub
            UsePAM no
            StrictModes no
            PidFile none
            MaxStartups 1000:30:2000
            LogLevel ERROR
            LoginGraceTime 20

            """.write(toFile: config, atomically: true, encoding: .utf8)
            let server = try SpawnedProcess("/usr/sbin/sshd", ["-D", "-e", "-f", config])
            if TrustTool.waitForListener(port: port, server: server) {
                servers.append(server)
                return port
            }
            server.terminate()
        }
        throw TrustTool.Failure("sshd did not start")
    }

    private func writeRelay() throws {
        try """
        use IO::Socket::INET; use IO::Select;
        open(STDERR, ">", "/dev/null");
        my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1", PeerPort => $ARGV[0]) or exit 1;
        my $sel = IO::Select->new(\\*STDIN, $s); my $b;
        while (my @ready = $sel->can_read(30)) {
          for my $h (@ready) {
            if ($h == $s) { sysread($s, $b, 65536) or exit 0; syswrite(STDOUT, $b) or exit 0 }
            else { sysread(STDIN, $b, 65536) or exit 0; syswrite($s, $b) or exit 0 }
          }
        }

        """.write(to: directory.appendingPathComponent("relay.pl"), atomically: true, encoding: .utf8)
    }

    /// Runs the real client and reads its verdict from its messages.
    func sshVerdict(knownHosts: String, globalKnownHosts: String = "/dev/null", host: String, port: Int, alias: String?,
                    algorithm: String, variant: CertificateVariant) throws -> (verdict: KeyVerdict?, messages: String) {
        var args = ["-v", "-F", "/dev/null", "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes",
                    "-o", "UserKnownHostsFile=\(knownHosts)", "-o", "GlobalKnownHostsFile=\(globalKnownHosts)",
                    "-o", "KexAlgorithms=curve25519-sha256", "-o", "HostKeyAlgorithms=\(algorithm)",
                    "-o", "PubkeyAuthentication=no", "-o", "PasswordAuthentication=no",
                    "-o", "KbdInteractiveAuthentication=no", "-o", "UpdateHostKeys=no", "-o", "ConnectTimeout=10",
                    "-o", "ProxyCommand=perl \(directory.path)/relay.pl \(ports[variant]!)", "-p", String(port)]
        if let alias { args += ["-o", "HostKeyAlias=\(alias)"] }
        args += [host, "true"]
        let output = try TrustTool.run("/usr/bin/ssh", args, stderr: true)
        let messages = output.split(whereSeparator: { $0.isNewline }).filter { $0.contains("known") || $0.contains("revoked") || $0.contains("strict") || $0.contains("CA") || $0.contains("Certificate") }
        return (TrustTool.classify(output), messages.joined(separator: "\n"))
    }
}

enum TrustTool {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ text: String) { description = text }
    }

    /// What the tool printed on standard output (or on standard error, with `stderr`); its exit status
    /// is the caller's to judge from that text.
    static func run(_ path: String, _ arguments: [String], stderr: Bool = false) throws -> String {
        let output = try Tool.run(path, arguments)
        return stderr ? output.stderr : output.stdout
    }

    static func waitForListener(port: Int, server: SpawnedProcess) -> Bool {
        for _ in 0..<100 {
            if !server.isRunning { return false }
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            close(fd)
            if connected == 0 { return true }
            usleep(20_000)
        }
        return false
    }

    /// The verdict implied by `ssh -v`'s messages: the last decisive one wins.
    static func classify(_ output: String) -> KeyVerdict? {
        var verdict: KeyVerdict?
        for line in output.split(whereSeparator: { $0.isNewline }) {
            if line.contains("is known and matches the") {
                verdict = line.contains("host certificate") ? .trustedByCA : .trusted
            } else if line.contains("has changed and you have requested strict checking") {
                verdict = .changed
            } else if line.contains("was revoked and you have requested strict checking") || line.contains("is marked as revoked") {
                verdict = .revoked
            } else if line.contains("host key is known for") && line.contains("requested strict checking") {
                verdict = .new
            } else if line.contains("differs from the key for the IP address") {
                verdict = .ipMismatch
            }
        }
        if output.contains("Host key verification failed.") {
            return verdict == .trusted || verdict == .trustedByCA ? nil : verdict
        }
        guard output.contains("Permission denied") || output.contains("Authenticated to") else { return nil }
        return verdict == .trustedByCA ? .trustedByCA : .trusted
    }
}
