import Foundation
import FleetTrustCore
#if canImport(Glibc)
import Glibc
#endif

/// One real `sshd` for route tests and the bastion bench: a bastion on 127.0.0.2 that admits one
/// client key (public-key authentication only) and logs at `DEBUG1`, or a target on 127.0.0.3
/// that only a bastion on loopback can reach the way the tests arrange it. Fresh Ed25519 and
/// ECDSA host keys; extra `sshd_config` lines (`AllowTcpForwarding no`, `PermitOpen …`) make the
/// failure cases. Stopped by its PID in `stop()` and `deinit`.
public final class LabSSHD: @unchecked Sendable {
    public let address: String
    public let port: Int
    public let directory: String
    public let publicKeys: [HostKey]
    public var logPath: String { directory + "/sshd.log" }
    private var process: SpawnedProcess?
    /// Connections logged before it was ready: the readiness checks.
    private var startupConnections = 0

    /// `authorizedKey`: the client public-key line it admits (nil: a target, which nobody logs in to).
    public init(address: String, authorizedKey: String? = nil, extraConfig: [String] = [], in parent: String) throws {
        self.address = address
        directory = parent + "/sshd-\(address)-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
        var keys: [HostKey] = []
        var keyFiles: [String] = []
        for (type, bits) in [("ed25519", nil), ("ecdsa", 256)] as [(String, Int?)] {
            let path = "\(directory)/ssh_host_\(type)_key"
            try KeyFiles.generate(type: type, bits: bits, path: path)
            keys.append(try HostKey(openSSHLine: String(contentsOfFile: path + ".pub", encoding: .utf8)))
            keyFiles.append(path)
        }
        publicKeys = keys
        var authorized = "AuthorizedKeysFile none"
        if let authorizedKey {
            try (authorizedKey + "\n").write(toFile: directory + "/authorized_keys", atomically: true, encoding: .utf8)
            authorized = "AuthorizedKeysFile \(directory)/authorized_keys"
        }
        let config = directory + "/sshd_config"
        let settings = keyFiles.map { "HostKey \($0)" } + [
            "PidFile none", "UsePAM no", "StrictModes no", "MaxStartups 1000:30:2000", "MaxSessions 1000",
            "PasswordAuthentication no", "KbdInteractiveAuthentication no", "PubkeyAuthentication yes",
            "PermitRootLogin prohibit-password", authorized, "UseDNS no", "LogLevel DEBUG1",
        ] + extraConfig
        var started: (SpawnedProcess, Int)?
        // A port chosen free may be taken by another test's server before ours binds it: then
        // another port, never the other server (`Loopback.isListening`).
        for _ in 0..<3 where started == nil {
            let port = try Loopback.freePort(address: address)
            try (["ListenAddress \(address):\(port)"] + settings).joined(separator: "\n").appending("\n")
                .write(toFile: config, atomically: true, encoding: .utf8)
            let process = try SpawnedProcess("/usr/sbin/sshd", ["-D", "-e", "-f", config], stderrPath: directory + "/sshd.log")
            let deadline = Date().addingTimeInterval(15)
            while !Loopback.accepts(address: address, port: port) && process.isRunning && Date() < deadline { usleep(5_000) }
            if Loopback.isListening(pid: process.pid, address: address, port: port) {
                started = (process, port)
            } else {
                process.terminate()
            }
        }
        guard let (process, port) = started else {
            let log = (try? String(contentsOfFile: directory + "/sshd.log", encoding: .utf8)) ?? ""
            throw TestFleetError.sshdDidNotStart("\(address): \(log)")
        }
        self.process = process
        self.port = port
        let settled = Date().addingTimeInterval(2)
        while loggedConnections == 0 && Date() < settled { usleep(5_000) }
        startupConnections = loggedConnections
    }

    /// `[address]:port`, as known_hosts names it.
    public var knownHostsName: String { "[\(address)]:\(port)" }

    /// known_hosts lines recording every host key of this server.
    public var knownHostsLines: String { publicKeys.map { "\(knownHostsName) \($0.openSSHLine)\n" }.joined() }

    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Logins it accepted (`Accepted publickey for …`).
    public var acceptedLogins: Int { log.components(separatedBy: "Accepted publickey for").count - 1 }

    /// Channels it was asked to forward to `target`:`port` (`server_request_direct_tcpip: … target A port P`).
    public func forwardRequests(to target: String, port: Int) -> Int {
        log.components(separatedBy: "target \(target) port \(port)").count - 1
    }

    /// Connections that reached it at all (`Connection from …`), its own readiness check not counted.
    public var connections: Int { loggedConnections - startupConnections }

    private var loggedConnections: Int { log.components(separatedBy: "Connection from ").count - 1 }

    public func stop() {
        process?.terminate()
        process = nil
    }

    deinit { stop() }
}
