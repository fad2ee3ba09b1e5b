import Foundation
import FleetTrustCore
import FleetTrustTestFleet

/// One real `sshd` with Ed25519, ECDSA P-256 and RSA host keys, listening on one port on
/// 127.0.0.1 (or `address`) and, where the machine has it and `ipv6` asks, on ::1. Stopped by its
/// PID in `stop()`.
final class LoopbackSSHD {
    let directory: String
    let port: Int
    let publicKeys: [HostKey]
    /// Whether it listens on [::1] too.
    private(set) var listensOnIPv6 = false
    private var process: SpawnedProcess?

    /// `port`: a given port (another server on the same port at another address), else a free one.
    init(address: String = "127.0.0.1", port chosen: Int? = nil, ipv6: Bool = true) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("ft-loopback-sshd-\(getpid())-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
        var keys: [HostKey] = []
        var keyFiles: [String] = []
        for (type, bits) in [("ed25519", nil), ("ecdsa", 256), ("rsa", 2048)] as [(String, Int?)] {
            let path = "\(directory)/ssh_host_\(type)_key"
            try KeyFiles.generate(type: type, bits: bits, path: path)
            keys.append(try HostKey(openSSHLine: String(contentsOfFile: path + ".pub", encoding: .utf8)))
            keyFiles.append(path)
        }
        publicKeys = keys
        port = try chosen ?? Loopback.freePort()
        let config = directory + "/sshd_config"
        let log = directory + "/sshd.log"
        try (["ListenAddress \(address):\(port)"] + (ipv6 ? ["ListenAddress [::1]:\(port)"] : []) + keyFiles.map { "HostKey \($0)" } + [
            "PidFile none", "UsePAM no", "StrictModes no", "MaxStartups 1000:30:2000", "PasswordAuthentication no",
            "KbdInteractiveAuthentication no", "AuthorizedKeysFile none", "UseDNS no", "LogLevel INFO",
        ]).joined(separator: "\n").appending("\n").write(toFile: config, atomically: true, encoding: .utf8)
        let process = try SpawnedProcess("/usr/sbin/sshd", ["-D", "-e", "-f", config], stderrPath: log)
        self.process = process
        let deadline = Date().addingTimeInterval(15)
        while !Loopback.accepts(address: address, port: port) {
            guard process.isRunning, Date() < deadline else {
                let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                stop()
                throw TestFleetError.sshdDidNotStart("\(address):\(port): \(text)")
            }
            usleep(5_000)
        }
        guard Loopback.isListening(pid: process.pid, address: address, port: port) else {
            stop()
            throw TestFleetError.portTaken("\(address):\(port)")
        }
        listensOnIPv6 = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("Server listening on ::1 port \(port)")
    }

    /// The key of an OpenSSH type name (`ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`).
    func key(ofType type: String) -> HostKey? { publicKeys.first { $0.type == type } }

    func stop() {
        process?.terminate()
        process = nil
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit { stop() }
}
