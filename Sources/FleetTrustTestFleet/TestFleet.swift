import Foundation
import FleetTrustCore
#if canImport(Glibc)
import Glibc
#endif

/// A fleet of real OpenSSH `sshd` processes on loopback, shared by the tests, `make demo`
/// and `make bench`.
///
/// Each host has its own freshly generated host keys (Ed25519, ECDSA P-256, RSA); host 0
/// also serves an Ed25519 host certificate signed by the fleet's test CA. The fleet writes a
/// matching plain inventory and a sample `known_hosts` covering the interesting verdicts, and
/// stops every `sshd` it started, by PID, in `stop()` and in `deinit`.
public final class TestFleet: @unchecked Sendable {
    public struct Endpoint: Hashable, Sendable {
        public var address: String
        public var port: Int
        /// `address:port`, as a plain inventory line.
        public var label: String { "\(address):\(port)" }
        /// The name OpenSSH looks this endpoint up under in known_hosts.
        public var knownHostsName: String { port == 22 ? address : "[\(address)]:\(port)" }
    }

    public struct Host: Sendable {
        public var index: Int
        public var name: String
        public var endpoints: [Endpoint]
        public var publicKeys: [HostKey]
        public var publicKeyFiles: [String]
        public var privateKeyFiles: [String]
        public var certificate: HostKey?
        public var certificateFile: String?
        public var pid: Int32
        public var directory: String

        public var address: String { endpoints[0].address }
        public var port: Int { endpoints[0].port }
        public var knownHostsName: String { endpoints[0].knownHostsName }
        public func key(ofType type: String) -> HostKey? { publicKeys.first { $0.type == type } }
    }

    public struct Options: Sendable {
        public var hosts: Int
        /// Loopback addresses each sshd listens on (at most 16, as sshd allows).
        public var addressesPerHost = 1
        /// Serve every endpoint on one port, distinct 127.0.x.y addresses (for `ssh-keyscan -p`).
        public var samePort = false
        public var certificateHost = true
        public var rsaBits = 3072
        public var directory: String?
        /// Let the user running the fleet log in with a key of the fleet's own (`loginKeyFile`), so
        /// the demo's connect reaches a shell; otherwise no login is possible.
        public var allowLogin = false
        /// sshd's `MaxStartups`; a stock server's `10:30:100` or less makes it refuse connections
        /// past a few at once, as real servers do.
        public var maxStartups = "1000:30:2000"
        /// A program and its arguments that start `sshd` in their place, sshd's own path and
        /// arguments following them and keeping its PID (it must exec), for example `unshare -m`
        /// to run the fleet where the Swift toolchain is hidden; empty: sshd is started directly.
        public var launcher: [String] = []

        public init(hosts: Int) { self.hosts = hosts }
    }

    /// Roles of the first hosts in the sample known_hosts (`roles[i]` for host i).
    public enum SampleRole: String, Sendable {
        case trustedByCA = "trusted-by-ca", trusted, new, changed, revoked
    }

    public let directory: String
    public let caPublicKey: HostKey
    public let caPrivateKeyFile: String
    public let inventoryPath: String
    public let knownHostsPath: String
    /// The private key that logs in to every host, with `Options.allowLogin`.
    public var loginKeyFile: String { directory + "/login_key" }
    public private(set) var hosts: [Host] = []
    public let options: Options
    private let lock = NSLock()
    private var processes: [Int: SpawnedProcess] = [:]
    private let ownsDirectory: Bool

    public static let sampleRoles: [SampleRole] = [.trustedByCA, .trusted, .new, .changed, .revoked]

    public static func start(hosts: Int) throws -> TestFleet { try TestFleet(Options(hosts: hosts)) }

    public init(_ options: Options) throws {
        precondition(options.hosts >= 1 && options.addressesPerHost >= 1 && options.addressesPerHost <= 16)
        self.options = options
        if let dir = options.directory {
            directory = dir
            ownsDirectory = false
        } else {
            directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("fleettrust-fleet-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
            ownsDirectory = true
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
        caPrivateKeyFile = directory + "/test_ca"
        try Tool.check("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "fleettrust test CA", "-f", caPrivateKeyFile])
        caPublicKey = try HostKey(openSSHLine: String(contentsOfFile: caPrivateKeyFile + ".pub", encoding: .utf8))
        inventoryPath = directory + "/inventory.txt"
        knownHostsPath = directory + "/known_hosts"
        if options.allowLogin {
            try Tool.check("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "fleettrust demo login", "-f",
                                                   directory + "/login_key"])
        }
        do {
            let endpoints = try allocateEndpoints()
            for i in 0..<options.hosts {
                hosts.append(try makeHost(index: i, endpoints: endpoints[i]))
            }
            try startAll()
            try writeInventory()
            try writeSampleKnownHosts()
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// Every endpoint of every host, in order.
    public var endpoints: [Endpoint] { hosts.flatMap(\.endpoints) }

    /// Stops every sshd this fleet started, by PID, and waits for each to exit.
    public func stop() {
        lock.lock()
        let running = processes
        processes = [:]
        lock.unlock()
        for (_, process) in running where process.isRunning { kill(process.pid, SIGTERM) }
        for (_, process) in running { process.terminate() }
        if ownsDirectory && !running.isEmpty { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// Gives host `index` brand-new host keys and restarts its sshd on the same endpoints,
    /// as a reinstalled machine (or an attacker) would present.
    public func rekey(host index: Int) throws {
        stopHost(index)
        let endpoints = hosts[index].endpoints
        try? FileManager.default.removeItem(atPath: hosts[index].directory)
        hosts[index] = try makeHost(index: index, endpoints: endpoints)
        try startHost(index)
    }

    /// Stops one host's sshd (its endpoints then refuse connections).
    public func stopHost(_ index: Int) {
        lock.lock()
        let process = processes.removeValue(forKey: index)
        lock.unlock()
        process?.terminate()
    }

    // MARK: - Set-up

    private func allocateEndpoints() throws -> [[Endpoint]] {
        if options.samePort {
            let count = options.hosts * options.addressesPerHost
            let addresses = (1...count).map { "127.0.\($0 / 250).\($0 % 250 + 2)" }
            let port = try Self.portFree(on: addresses)
            var next = addresses.makeIterator()
            return (0..<options.hosts).map { _ in
                (0..<options.addressesPerHost).map { _ in Endpoint(address: next.next()!, port: port) }
            }
        }
        // Every socket stays open until all ports are chosen: closed one by one, the kernel may
        // hand the same port out twice, and two sshds would then share an endpoint.
        var held: [Int32] = []
        defer { held.forEach { close($0) } }
        return try (0..<options.hosts).map { _ in
            try (0..<options.addressesPerHost).map { _ in
                let (fd, port) = try Loopback.listeningSocket(address: "127.0.0.1", backlog: 1)
                held.append(fd)
                return Endpoint(address: "127.0.0.1", port: port)
            }
        }
    }

    /// A port free on every one of these addresses, not only on 127.0.0.1: test processes run in
    /// parallel and another one's fleet may hold the same port on 127.0.0.2 and up.
    private static func portFree(on addresses: [String]) throws -> Int {
        for _ in 0..<50 {
            let port = try Loopback.freePort()
            var held: [Int32] = []
            defer { held.forEach { close($0) } }
            let free = addresses.allSatisfy { address in
                guard let (fd, _) = try? Loopback.listeningSocket(address: address, port: port, backlog: 1) else { return false }
                held.append(fd)
                return true
            }
            if free { return port }
        }
        throw TestFleetError.noFreePort
    }

    private func makeHost(index: Int, endpoints: [Endpoint]) throws -> Host {
        let dir = directory + "/host\(index)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var keys: [HostKey] = [], pubs: [String] = [], privs: [String] = []
        for (type, bits) in [("ed25519", 256), ("ecdsa", 256), ("rsa", options.rsaBits)] {
            let path = "\(dir)/ssh_host_\(type)_key"
            try Tool.check("/usr/bin/ssh-keygen", ["-q", "-t", type, "-b", String(bits), "-N", "", "-C", "host\(index)", "-f", path])
            keys.append(try HostKey(openSSHLine: String(contentsOfFile: path + ".pub", encoding: .utf8)))
            pubs.append(path + ".pub")
            privs.append(path)
        }
        var certificate: HostKey?
        var certificateFile: String?
        if options.certificateHost && index == 0 {
            let principals = (endpoints.map(\.address) + ["host0.fleet.test"]).joined(separator: ",")
            try Tool.check("/usr/bin/ssh-keygen", ["-q", "-s", caPrivateKeyFile, "-h", "-I", "host0", "-n", principals,
                                                   "-z", "1", "-V", "-5m:+52w", pubs[0]])
            certificateFile = "\(dir)/ssh_host_ed25519_key-cert.pub"
            certificate = try HostKey(openSSHLine: String(contentsOfFile: certificateFile!, encoding: .utf8))
        }
        return Host(index: index, name: "host\(index)", endpoints: endpoints, publicKeys: keys, publicKeyFiles: pubs,
                    privateKeyFiles: privs, certificate: certificate, certificateFile: certificateFile, pid: 0, directory: dir)
    }

    private func sshdConfig(for host: Host) -> String {
        var lines = host.endpoints.map { "ListenAddress \($0.address):\($0.port)" }
        lines += host.privateKeyFiles.map { "HostKey \($0)" }
        if let cert = host.certificateFile { lines.append("HostCertificate \(cert)") }
        lines += [
            "PidFile none", "UsePAM no", "StrictModes no", "MaxStartups \(options.maxStartups)",
            "PasswordAuthentication no", "KbdInteractiveAuthentication no",
            options.allowLogin ? "AuthorizedKeysFile \(loginKeyFile).pub" : "AuthorizedKeysFile none",
            "LogLevel ERROR", "UseDNS no",
        ]
        if options.allowLogin { lines.append("PermitRootLogin prohibit-password") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Starts every host; when another process's server took a chosen port before ours bound
    /// it, starts them all again on freshly chosen ports (the keys do not name a port).
    private func startAll() throws {
        for attempt in 1...3 {
            for i in hosts.indices { try launch(i) }
            do {
                for i in hosts.indices { try waitUntilReady(i) }
                return
            } catch TestFleetError.portTaken(_) where attempt < 3 {
                for i in hosts.indices { stopHost(i) }
                let endpoints = try allocateEndpoints()
                for i in hosts.indices { hosts[i].endpoints = endpoints[i] }
            }
        }
    }

    private func startHost(_ index: Int) throws {
        try launch(index)
        try waitUntilReady(index)
    }

    private func launch(_ index: Int) throws {
        let config = hosts[index].directory + "/sshd_config"
        try sshdConfig(for: hosts[index]).write(toFile: config, atomically: true, encoding: .utf8)
        let command = options.launcher + ["/usr/sbin/sshd", "-D", "-e", "-f", config]
        let process = try SpawnedProcess(command[0], Array(command.dropFirst()),
                                         stderrPath: hosts[index].directory + "/sshd.log")
        hosts[index].pid = process.pid
        lock.lock()
        processes[index] = process
        lock.unlock()
    }

    /// Waits until host `index`'s own sshd listens on every endpoint: something answering there
    /// is not enough (`Loopback.isListening`).
    private func waitUntilReady(_ index: Int) throws {
        let deadline = Date().addingTimeInterval(15)
        lock.lock()
        let process = processes[index]
        lock.unlock()
        let log = { (try? String(contentsOfFile: self.hosts[index].directory + "/sshd.log", encoding: .utf8)) ?? "" }
        for endpoint in hosts[index].endpoints {
            while !Loopback.accepts(address: endpoint.address, port: endpoint.port) {
                if process?.isRunning != true || Date() > deadline {
                    // Another process bound the port between our choosing it and sshd binding it.
                    let text = log()
                    if text.contains("Address already in use") {
                        throw TestFleetError.portTaken("host\(index) on \(endpoint.label): \(text)")
                    }
                    throw TestFleetError.sshdDidNotStart("host\(index) on \(endpoint.label): \(text)")
                }
                usleep(5_000)
            }
            guard let process, Loopback.isListening(pid: process.pid, address: endpoint.address, port: endpoint.port) else {
                throw TestFleetError.portTaken("host\(index) on \(endpoint.label): \(log())")
            }
        }
    }

    private func writeInventory() throws {
        let lines = ["# fleettrust test fleet: one sshd per host on 127.0.0.1"] + endpoints.map(\.label)
        try (lines.joined(separator: "\n") + "\n").write(toFile: inventoryPath, atomically: true, encoding: .utf8)
    }

    /// host0 trusted by CA, host1 trusted, host2 new, host3 changed, host4 revoked (as far as hosts exist).
    private func writeSampleKnownHosts() throws {
        var lines = ["# fleettrust sample known_hosts for the test fleet"]
        for (host, role) in zip(hosts, TestFleet.sampleRoles) {
            let name = host.knownHostsName
            switch role {
            case .trustedByCA:
                if host.certificate != nil {
                    lines.append("@cert-authority \(name) \(caPublicKey.openSSHLine)")
                } else {
                    lines += host.publicKeys.map { "\(name) \($0.openSSHLine)" }
                }
            case .trusted:
                lines += host.publicKeys.map { "\(name) \($0.openSSHLine)" }
            case .new:
                break
            case .changed:
                lines.append("\(name) \(try Self.throwawayKey(in: directory).openSSHLine)")
            case .revoked:
                lines += host.publicKeys.map { "\(name) \($0.openSSHLine)" }
                lines += host.publicKeys.map { "@revoked \(name) \($0.openSSHLine)" }
            }
        }
        try (lines.joined(separator: "\n") + "\n").write(toFile: knownHostsPath, atomically: true, encoding: .utf8)
    }

    /// A fresh Ed25519 key that no host holds.
    public static func throwawayKey(in directory: String) throws -> HostKey {
        let path = directory + "/throwaway-\(UInt32.random(in: 0...UInt32.max))"
        try Tool.check("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", path])
        defer {
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: path + ".pub")
        }
        return try HostKey(openSSHLine: String(contentsOfFile: path + ".pub", encoding: .utf8))
    }
}
