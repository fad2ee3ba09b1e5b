import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet
@testable import FleetTrustSSH

final class ProbePoolTests: XCTestCase {
    private static let fleet = Result { try TestFleet(options(hosts: 2, addressesPerHost: 12)) }

    private static func options(hosts: Int, addressesPerHost: Int) -> TestFleet.Options {
        var options = TestFleet.Options(hosts: hosts)
        options.addressesPerHost = addressesPerHost
        return options
    }

    /// Makes the fleet here, on XCTest's thread: its set-up runs `Tool` synchronously, which must not
    /// wait on a cooperative-pool thread, where the `async` tests below would otherwise first touch it.
    override class func setUp() {
        super.setUp()
        _ = fleet
    }

    override class func tearDown() {
        if case .success(let fleet) = fleet { fleet.stop() }
        super.tearDown()
    }

    private func collect(_ pool: ProbePool, _ hosts: [InventoryHost]) async -> [ProbeResult] {
        var results = [ProbeResult?](repeating: nil, count: hosts.count)
        for await event in pool.probe(hosts) { results[event.index] = event.result }
        return results.map { $0 ?? ProbeResult(host: "missing", port: 0) }
    }

    private func inventoryHost(_ endpoint: TestFleet.Endpoint) -> InventoryHost {
        InventoryHost(name: endpoint.address, address: endpoint.address, port: endpoint.port)
    }

    func testEveryDiscoveredFingerprintEqualsSshKeygenOfTheServerKeyFiles() async throws {
        let fleet = try Self.fleet.get()
        let hosts = fleet.hosts.map { inventoryHost($0.endpoints[0]) }
        let results = await collect(ProbePool(), hosts)
        for (host, result) in zip(fleet.hosts, results) {
            XCTAssertNil(result.failure, "\(host.name): \(String(describing: result.failure))")
            var expected: Set<String> = []
            for file in host.publicKeyFiles {
                let line = try await Tool.check("/usr/bin/ssh-keygen", ["-lf", file])
                expected.insert(String(line.split(separator: " ")[1]))
            }
            let plain = result.keys.filter { !$0.key.isCertificate }
            XCTAssertEqual(Set(plain.map(\.key.sha256Fingerprint)), expected, host.name)
            XCTAssertEqual(Set(plain.map(\.key.type)), ["ssh-ed25519", "ecdsa-sha2-nistp256", "ssh-rsa"], host.name)
        }
    }

    func testHostCertificateIsFoundAndItsCertifiedKeyMatchesSshKeygen() async throws {
        let fleet = try Self.fleet.get()
        let host = try XCTUnwrap(fleet.hosts.first { $0.certificate != nil })
        let result = await collect(ProbePool(), [inventoryHost(host.endpoints[0])])[0]
        let certificates = result.keys.filter(\.key.isCertificate)
        XCTAssertEqual(certificates.map(\.key), [host.certificate])
        let oracle = try await Tool.check("/usr/bin/ssh-keygen", ["-lf", try XCTUnwrap(host.certificateFile)])
        let certified = try HostCertificate(try XCTUnwrap(certificates.first?.key)).key
        XCTAssertEqual(String(oracle.split(separator: " ")[1]), certified.sha256Fingerprint)
    }

    func testNegotiatedAlgorithmsAndServerVersionAreRecorded() async throws {
        let fleet = try Self.fleet.get()
        let result = await collect(ProbePool(), [inventoryHost(fleet.hosts[0].endpoints[0])])[0]
        XCTAssertTrue(result.serverVersion?.hasPrefix("SSH-2.0-OpenSSH_") ?? false, String(describing: result.serverVersion))
        XCTAssertEqual(result.peerAddress, fleet.hosts[0].address)
        let rsa = try XCTUnwrap(result.keys.first { $0.key.type == "ssh-rsa" })
        XCTAssertEqual(Set(result.keys.compactMap(\.algorithms?.hostKey)),
                       ["ssh-ed25519", "ecdsa-sha2-nistp256", "rsa-sha2-512", "ssh-ed25519-cert-v01@openssh.com"])
        XCTAssertEqual(rsa.algorithms?.hostKey, "rsa-sha2-512")
        for key in result.keys {
            let algorithms = try XCTUnwrap(key.algorithms)
            XCTAssertFalse(algorithms.keyExchange.isEmpty)
            XCTAssertFalse(algorithms.cipher.isEmpty)
            XCTAssertFalse(algorithms.mac.isEmpty)
            XCTAssertEqual(WeakKeys.weaknesses(of: key), [])
        }
    }

    func testClosedPortFailsAtConnectStage() async throws {
        let port = try Loopback.freePort()
        let result = await collect(ProbePool(settings: .init(timeout: .seconds(2))),
                                   [InventoryHost(name: "127.0.0.1", port: port)])[0]
        XCTAssertEqual(result.failure?.stage, .connect)
        XCTAssertEqual(result.failure?.code, .connectionRefused)
    }

    func testSilentPortFailsAtBannerStageWithinTheTimeout() async throws {
        let silent = try SilentListener()
        defer { silent.close() }
        let start = ContinuousClock.now
        let result = await collect(ProbePool(settings: .init(timeout: .seconds(1))),
                                   [InventoryHost(name: "127.0.0.1", port: silent.port)])[0]
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(6))
        XCTAssertEqual(result.failure?.stage, .banner)
        XCTAssertEqual(result.failure?.code, .bannerTimeout)
        XCTAssertEqual(result.failures.count, 1, "a silent host must not be retried for every key type")
    }

    func testServerSpeakingAnotherProtocolIsReportedAsNotSSH() async throws {
        let smtp = try TalkingListener(greeting: "220 mail.example ESMTP \u{1b}[2Jready\r\n")
        defer { smtp.close() }
        let result = await collect(ProbePool(settings: .init(timeout: .seconds(2))),
                                   [InventoryHost(name: "127.0.0.1", port: smtp.port)])[0]
        XCTAssertEqual(result.failure?.stage, .banner)
        XCTAssertEqual(result.failure?.code, .notSSH)
        XCTAssertTrue(result.failure?.message.value.contains("220 mail.example ESMTP ?[2Jready") ?? false,
                      String(describing: result.failure))
    }

    func testCancellingTheScanFreesAWorkerStuckOnASilentServer() async throws {
        let fleet = try Self.fleet.get()
        let silent = try SilentListener()
        defer { silent.close() }
        let pool = ProbePool(settings: .init(concurrency: 1, timeout: .seconds(120)))
        let stuck = pool.start([InventoryHost(name: "127.0.0.1", port: silent.port)])
        // Cancel only once the probe's connections wait for the silent server's banner in the
        // key-exchange engine's event loop.
        await ThreadsWaitingOnIO.waitUntil("the probe waits for the silent server's banner") { () async -> Bool in
            stuck.activity(of: 0) == ProbeStage.banner.rawValue
                && ThreadsWaitingOnIO.threads(named: "fleettrust-kex").contains(where: ThreadsWaitingOnIO.isWaiting)
        }
        let cancelled = ContinuousClock.now
        await stuck.cancel()
        for await _ in stuck.events {}
        await ThreadsWaitingOnIO.waitUntil("the cancel ended the blocked probe (120 s timeout)", timeout: .seconds(30)) {
            await stuck.progress.done == 1
        }
        XCTAssertLessThan(ContinuousClock.now - cancelled, .seconds(30), "the cancel did not interrupt the blocked handshake")
        let start = ContinuousClock.now
        let result = await collect(pool, [inventoryHost(fleet.hosts[0].endpoints[0])])[0]
        XCTAssertEqual(result.keys.filter { !$0.key.isCertificate }.count, 3)
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(30), "the only worker stayed stuck on the silent server")
    }

    func testThePoolSaysHowManyHostsAreInFlightAndQueuedUntilTheScanEnds() async throws {
        let silent = try (0..<3).map { _ in try SilentListener() }
        defer { silent.forEach { $0.close() } }
        let pool = ProbePool(settings: .init(concurrency: 2, timeout: .seconds(120)))
        XCTAssertNil(pool.load, "nothing is probed yet")
        let scan = pool.start(silent.map { InventoryHost(name: "127.0.0.1", port: $0.port) })
        await ThreadsWaitingOnIO.waitUntil("two hosts in flight, the third queued behind them") { () async -> Bool in
            pool.load?.inFlight == 2 && pool.load?.waiting == 1
        }
        await scan.cancel()
        for await _ in scan.events {}
        await ThreadsWaitingOnIO.waitUntil("no host in flight once the scan ended", timeout: .seconds(30)) { () async -> Bool in
            pool.load == nil
        }
    }

    func testManyHostsInParallelAllFinishWhileBrokenOnesFail() async throws {
        let fleet = try Self.fleet.get()
        let silent = try SilentListener()
        defer { silent.close() }
        let closed = try Loopback.freePort()
        var hosts = fleet.endpoints.map(inventoryHost)
        hosts.insert(InventoryHost(name: "127.0.0.1", port: silent.port), at: 3)
        hosts.insert(InventoryHost(name: "127.0.0.1", port: closed), at: 7)
        let results = await collect(ProbePool(settings: .init(concurrency: 64, timeout: .seconds(3))), hosts)
        XCTAssertGreaterThanOrEqual(hosts.count, 24)
        for (index, result) in results.enumerated() {
            switch index {
            case 3: XCTAssertEqual(result.failure?.code, .bannerTimeout)
            case 7: XCTAssertEqual(result.failure?.code, .connectionRefused)
            default: XCTAssertEqual(result.keys.filter { !$0.key.isCertificate }.count, 3, "\(hosts[index].endpointLabel): \(result.failures)")
            }
        }
        let shared = SharedKeys.groups(in: results)
        XCTAssertEqual(Set(shared.map(\.hosts.count)), [fleet.options.addressesPerHost],
                       "each sshd serves the same keys on all its addresses")
    }

    func testCancellingMidScanInterruptsHandshakesAndLeaksNoSockets() async throws {
        let fleet = try Self.fleet.get()
        let silent = try SilentListener()
        defer { silent.close() }
        let hosts = Array(repeating: fleet.endpoints.map(inventoryHost), count: 4).flatMap { $0 }
            + Array(repeating: InventoryHost(name: "127.0.0.1", port: silent.port), count: 20)
        let pool = ProbePool(settings: .init(concurrency: 64, timeout: .seconds(120)))
        _ = await collect(pool, [inventoryHost(fleet.hosts[0].endpoints[0])])
        let baseline = openSockets()
        var generator = SeededGenerator.announced("cancelled scans' order")
        for _ in 0..<3 {
            let scan = pool.start(hosts.shuffled(using: &generator))
            for await _ in scan.events { break }
            await scan.cancel()
        }
        var remaining = openSockets()
        let deadline = ContinuousClock.now + .seconds(20)
        while remaining > baseline && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            remaining = openSockets()
        }
        XCTAssertLessThanOrEqual(remaining, baseline, "sockets still open after the cancelled probes ended")
        let result = await collect(pool, [inventoryHost(fleet.hosts[0].endpoints[0])])[0]
        XCTAssertEqual(result.keys.filter { !$0.key.isCertificate }.count, 3)
    }

    /// 24 handshakes blocked on silent servers, more than 10 times the cores: each waits on a
    /// dedicated probe thread, and Swift's cooperative pool stays free to run other work while
    /// they are still blocked (on the cooperative pool, two of them would have taken it all).
    func testBlockedHandshakesWaitOnDedicatedThreadsAndLeaveTheCooperativePoolFree() async throws {
        let silent = try SilentListener()
        defer { silent.close() }
        let hosts = Array(repeating: InventoryHost(name: "127.0.0.1", port: silent.port), count: 24)
        let scan = ProbePool(settings: .init(concurrency: 64, timeout: .seconds(60))).start(hosts)
        var waiting = 0
        let deadline = ContinuousClock.now + .seconds(20)
        while waiting < hosts.count && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            waiting = probeThreads()
        }
        XCTAssertGreaterThanOrEqual(waiting, hosts.count, "probe threads")
        let sum = await withTaskGroup(of: Int.self) { group in
            for value in 1...64 { group.addTask { value } }
            return await group.reduce(0, +)
        }
        XCTAssertEqual(sum, 64 * 65 / 2)
        let progress = await scan.progress
        XCTAssertEqual(progress.done, 0, "the silent servers must still hold their handshakes")
        await scan.cancel()
        var cancelled = 0
        for await event in scan.events where event.result.failure?.stage == .cancelled { cancelled += 1 }
        let ended = ContinuousClock.now + .seconds(20)
        var finished = await scan.progress
        while finished.done < hosts.count && ContinuousClock.now < ended {
            try await Task.sleep(for: .milliseconds(50))
            finished = await scan.progress
        }
        XCTAssertEqual(finished.done, hosts.count, "cancel must free every blocked thread long before the 60 s timeout")
        XCTAssertEqual(cancelled, 0, "results after cancel() are not delivered")
    }

    /// Threads of this process named by the pool (`fleettrust-ssh`, as `top -H` shows them).
    private func probeThreads() -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter {
            (try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8))?.hasPrefix("fleettrust-ssh") == true
        }.count
    }

    private func openSockets() -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.filter {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0))?.hasPrefix("socket:") == true
        }.count
    }
}
