import Foundation
import Glibc
import Synchronization
import XCTest
import FleetTrustCore
import FleetTrustTestFleet
@testable import FleetTrustSSH

/// When and how often a scan logs in to its bastion, and how many channels one master gives at
/// once, against real `sshd`s: a bastion on 127.0.0.2 that admits the test's key and logs every
/// login and forwarded channel (`LogLevel DEBUG1`), a target on 127.0.0.3. The client's ssh_config,
/// key and known_hosts are the test's own files: nothing of the real ~/.ssh is read.
final class BastionMasterStartTests: XCTestCase {
    private var directory = ""
    private var bastion: LabSSHD!
    private var target: LabSSHD!

    private var config: String { directory + "/ssh_config" }

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "ft-masterstart-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let identity = directory + "/id_ed25519"
        try KeyFiles.generate(type: "ed25519", path: identity)
        bastion = try LabSSHD(address: "127.0.0.2", authorizedKey: try KeyFiles.line(publicKeyFile: identity + ".pub"), in: directory)
        target = try LabSSHD(address: "127.0.0.3", in: directory)
        let knownHosts = directory + "/known_hosts"
        try (bastion.knownHostsLines + target.knownHostsLines).write(toFile: knownHosts, atomically: true, encoding: .utf8)
        try """
            Host bastion
              HostName \(bastion.address)
              Port \(bastion.port)
            Host *
              User root
              IdentityFile \(identity)
              IdentitiesOnly yes
              IdentityAgent none
              UserKnownHostsFile \(knownHosts)
              GlobalKnownHostsFile /dev/null

            """.write(toFile: config, atomically: true, encoding: .utf8)
    }

    override func tearDown() {
        bastion?.stop()
        target?.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func routed(_ name: String) -> InventoryHost {
        InventoryHost(name: name, address: target.address, port: target.port, routing: HostRoute.parse("ProxyJump bastion"))
    }

    private var forwarded: Int { bastion.forwardRequests(to: target.address, port: target.port) }

    /// One host in flight at a time, a silent host first: the routed host's probe cannot start
    /// before the silent one has timed out, yet the bastion has seen the login long before, with
    /// no channel asked for yet. The scan logs in once, and a second scan of the same pool (a
    /// dashboard's rescan) goes through the same login.
    func testTheBastionLoginRunsBesideTheHostsAheadOfTheFirstRoutedProbeAndHappensOncePerSession() async throws {
        let (silent, silentPort) = try Loopback.listeningSocket(address: "127.0.0.1", backlog: 8)
        defer { close(silent) }
        let pool = ProbePool(settings: .init(concurrency: 1, timeout: .seconds(5), routes: .init(configFile: config)))
        let hosts = [InventoryHost(name: "silent", address: "127.0.0.1", port: silentPort), routed("web1")]
        let scan = pool.start(hosts)
        let deadline = Date().addingTimeInterval(5)
        while bastion.acceptedLogins == 0 && Date() < deadline { usleep(10_000) }
        XCTAssertEqual(bastion.acceptedLogins, 1, "the login began with the scan:\n\(bastion.log)")
        XCTAssertEqual(forwarded, 0, "before any routed probe asked for a channel")
        let progress = await scan.progress
        XCTAssertEqual(progress.done, 0, "while the silent host still held the only thread")
        var results = [ProbeResult?](repeating: nil, count: hosts.count)
        for await event in scan.events { results[event.index] = event.result }
        XCTAssertEqual(results[0]?.failure?.stage, .banner, "the silent host timed out: \(String(describing: results[0]))")
        XCTAssertEqual(Set(results[1]?.keys.map(\.key) ?? []), Set(target.publicKeys), "\(String(describing: results[1]))")
        XCTAssertEqual(bastion.acceptedLogins, 1)

        var again = [ProbeResult?](repeating: nil, count: 2)
        for await event in pool.probe([routed("web1"), routed("web2")]) { again[event.index] = event.result }
        for result in again { XCTAssertEqual(result?.keys.count, target.publicKeys.count, "\(String(describing: result))") }
        XCTAssertEqual(bastion.acceptedLogins, 1, "the second scan went through the same login:\n\(bastion.log)")
    }

    /// A host the scan will not probe through a master (a refused one, a ProxyCommand) logs in to nothing.
    func testHostsThatNeedNoMasterStartNone() throws {
        let connections = BastionConnections(settings: .init(configFile: config), timeout: .seconds(5))
        defer { connections.close() }
        let refused = InventoryHost(name: "bad", address: "web$(touch x)", port: target.port, routing: HostRoute.parse("ProxyJump bastion"))
        XCTAssertNotNil(refused.refusal)
        let command = InventoryHost(name: "viacommand", address: target.address, port: target.port,
                                    routing: HostRoute.parse("ProxyCommand /usr/bin/ssh -F \(config) -W %h:%p bastion"))
        var tls = routed("tls")
        tls.endpoint = .tls(TLSEndpoint(serverName: nil))
        connections.startMasters(for: [refused, command, tls, InventoryHost(name: "direct", address: target.address, port: target.port)])
        // An absence (no login) has no event to wait for: 1.5 s is several times what a master takes to log in here.
        usleep(1_500_000)
        XCTAssertEqual(bastion.acceptedLogins, 0, bastion.log)
    }

    /// Far more channels at once than ssh's control socket backlog (64) holds: every one opens, and
    /// the target's banner comes through each.
    func testOneMasterOpensMoreChannelsAtOnceThanItsBacklogHolds() throws {
        let connections = BastionConnections(settings: .init(configFile: config), timeout: .seconds(20))
        defer { connections.close() }
        let master = try connections.master(for: connections.chain(for: routed("web1")), cancellation: ProbeCancellation()).get()
        let count = 160
        let banners = Mutex<[String]>([])
        let (address, port) = (target.address, target.port)
        let threads = (0..<count).map { _ in
            Thread {
                var pair: [Int32] = [-1, -1]
                guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { return }
                defer { close(pair[0]) }
                let channel = try? master.openChannel(host: address, port: port, descriptor: pair[1],
                                                      deadline: .now + .seconds(20), cancellation: ProbeCancellation())
                close(pair[1])
                guard let channel else { return }
                var buffer = [UInt8](repeating: 0, count: 64)
                let read = Glibc.read(pair[0], &buffer, buffer.count)
                withExtendedLifetime(channel) {}
                banners.withLock { $0.append(String(decoding: buffer.prefix(max(0, read)), as: UTF8.self)) }
            }
        }
        threads.forEach { $0.start() }
        let deadline = Date().addingTimeInterval(60)
        while banners.withLock({ $0.count }) < count && Date() < deadline { usleep(20_000) }
        let seen = banners.withLock { $0 }
        XCTAssertEqual(seen.count, count)
        XCTAssertEqual(seen.filter { $0.hasPrefix("SSH-2.0-OpenSSH") }.count, count, "\(Set(seen))")
        XCTAssertEqual(forwarded, count)
        XCTAssertEqual(bastion.acceptedLogins, 1)
    }
}
