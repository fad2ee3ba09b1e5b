import Foundation
import XCTest
import FleetTrustCore

/// Proves, with the real `ssh` against a real `sshd`, that the known_hosts name fleettrust derives
/// for an ssh_config inventory host is the one `ssh` itself looks up — and that the alias is not.
final class InventoryNamingTests: XCTestCase {
    private var server: InventoryTestSSHD!
    private var directory: String!

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "fleettrust-naming-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        server = try InventoryTestSSHD.start(in: directory)
    }

    override func tearDown() {
        server?.stop()
        if let directory { try? FileManager.default.removeItem(atPath: directory) }
    }

    private func inventory() throws -> (config: String, hosts: Inventory) {
        let config = """
        Host fleet-alias
            HostName 127.0.0.1
            Port \(server.port)
        Host keyed-alias
            HostName 127.0.0.1
            Port \(server.port)
            HostKeyAlias Keyed.Example.TEST
        """
        let path = directory + "/ssh_config"
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let inventory = Inventory.read(InventorySource(name: path, bytes: Array(data)))
        XCTAssertEqual(inventory.diagnostics, [])
        return (path, inventory)
    }

    func testSSHAcceptsTheHostKeyUnderTheDerivedNameForAnAliasWithHostNameAndPort() throws {
        let (config, inventory) = try inventory()
        let host = try XCTUnwrap(inventory.hosts.first { $0.name == "fleet-alias" })
        XCTAssertEqual(host.knownHostsName, "[127.0.0.1]:\(server.port)")
        XCTAssertEqual(host.additionalNames, ["fleet-alias"])
        XCTAssertEqual(try sshVerdict(config: config, alias: "fleet-alias", knownHostsName: host.knownHostsName), .passedHostKeyCheck)
        for aliasName in ["fleet-alias", "[fleet-alias]:\(server.port)"] {
            XCTAssertEqual(try sshVerdict(config: config, alias: "fleet-alias", knownHostsName: aliasName), .hostKeyRejected,
                           "an entry under the alias \(aliasName) must not satisfy ssh")
        }
    }

    func testSSHAcceptsTheHostKeyUnderTheHostKeyAliasWithoutPort() throws {
        let (config, inventory) = try inventory()
        let host = try XCTUnwrap(inventory.hosts.first { $0.name == "keyed-alias" })
        XCTAssertEqual(host.knownHostsName, "keyed.example.test")
        XCTAssertEqual(try sshVerdict(config: config, alias: "keyed-alias", knownHostsName: host.knownHostsName), .passedHostKeyCheck)
        for otherName in ["[keyed.example.test]:\(server.port)", "[127.0.0.1]:\(server.port)", "keyed-alias"] {
            XCTAssertEqual(try sshVerdict(config: config, alias: "keyed-alias", knownHostsName: otherName), .hostKeyRejected,
                           "an entry under \(otherName) must not satisfy ssh")
        }
    }

    private enum SSHOutcome: Equatable {
        case passedHostKeyCheck
        case hostKeyRejected
        case other(String)
    }

    /// Runs `ssh -F config alias true` with a known_hosts file holding the server's key under
    /// `knownHostsName`. Authentication always fails (the server accepts no key), so "Permission
    /// denied" proves the host key was accepted without a prompt.
    private func sshVerdict(config: String, alias: String, knownHostsName: String) throws -> SSHOutcome {
        let knownHosts = directory + "/known_hosts"
        try (knownHostsName + " " + server.publicKeyLine + "\n").write(toFile: knownHosts, atomically: true, encoding: .utf8)
        let log = directory + "/ssh.log"
        let pid = try ChildProcess.spawn("/usr/bin/ssh", [
            "-F", config, "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
            "-o", "UserKnownHostsFile=\(knownHosts)", "-o", "GlobalKnownHostsFile=/dev/null",
            "-o", "IdentityAgent=none", "-o", "IdentitiesOnly=yes", "-o", "IdentityFile=/dev/null",
            "-o", "ConnectTimeout=20", alias, "true",
        ], output: log)
        _ = ChildProcess.wait(pid)
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        if output.contains("Permission denied") { return .passedHostKeyCheck }
        if output.contains("Host key verification failed") { return .hostKeyRejected }
        return .other(output)
    }
}

/// A real sshd on 127.0.0.1 with one ed25519 host key that accepts no client key.
final class InventoryTestSSHD {
    let port: Int
    /// `type base64` from the host key's .pub file, as a known_hosts line needs it.
    let publicKeyLine: String
    private let pid: pid_t

    private init(port: Int, publicKeyLine: String, pid: pid_t) {
        self.port = port
        self.publicKeyLine = publicKeyLine
        self.pid = pid
    }

    static func start(in directory: String) throws -> InventoryTestSSHD {
        let keyPath = directory + "/ssh_host_ed25519_key"
        let keygen = try ChildProcess.spawn("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", keyPath],
                                            output: nil)
        guard ChildProcess.wait(keygen) == 0 else { throw ChildProcess.Failure.exit("ssh-keygen") }
        let publicKey = try String(contentsOfFile: keyPath + ".pub", encoding: .utf8)
        let publicKeyLine = publicKey.split(separator: " ").prefix(2).joined(separator: " ")
        try FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
        for _ in 0..<5 {
            let port = Int.random(in: 20_000...60_000)
            let config = directory + "/sshd_config"
            try """
            ListenAddress 127.0.0.1:\(port)
            HostKey \(keyPath)
            UsePAM no
            StrictModes no
            PidFile none
            AuthorizedKeysFile none
            PasswordAuthentication no
            KbdInteractiveAuthentication no
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let pid = try ChildProcess.spawn("/usr/sbin/sshd", ["-D", "-e", "-f", config], output: directory + "/sshd.log")
            if waitForListener(port: port, pid: pid) {
                return InventoryTestSSHD(port: port, publicKeyLine: publicKeyLine, pid: pid)
            }
            kill(pid, SIGTERM)
            _ = ChildProcess.wait(pid)
        }
        throw ChildProcess.Failure.exit("sshd did not start listening")
    }

    func stop() {
        kill(pid, SIGTERM)
        _ = ChildProcess.wait(pid)
    }

    private static func waitForListener(port: Int, pid: pid_t) -> Bool {
        for _ in 0..<100 {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { return false }
            if canConnect(port: port) { return true }
            usleep(50_000)
        }
        return false
    }

    private static func canConnect(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

/// Starts child processes with `posix_spawn` and reaps them by PID (Foundation's `Process` was
/// seen to hang in `waitUntilExit` here while another child was running).
enum ChildProcess {
    enum Failure: Error {
        case spawn(String, Int32)
        case exit(String)
    }

    /// Standard output and error go to `output` (or /dev/null); standard input is /dev/null.
    static func spawn(_ path: String, _ arguments: [String], output: String?) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = ProcessInfo.processInfo.environment.map { strdup("\($0)=\($1)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard result == 0 else { throw Failure.spawn(path, result) }
        return pid
    }

    /// Waits for `pid` and returns its exit status (or 128 + signal).
    static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }
}
