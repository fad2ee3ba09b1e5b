import Foundation
import XCTest
import FleetTrustTestFleet

/// Nothing found is lost when the network is slow or the servers are busy: a scan through a relay
/// that adds round-trip time, and a scan of a server that refuses connections past two at once
/// (`MaxStartups 2:100:2`), and a scan with a short timeout while busy processes keep every core
/// of the machine saturated, each still end with every key of every host and no host failed.
final class SlowAndBusyFleetTests: XCTestCase {
    private var processes: [SpawnedProcess] = []
    private var fleets: [TestFleet] = []
    private var scratch: String!

    override func setUp() {
        super.setUp()
        scratch = NSTemporaryDirectory() + "slow-fleet-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try? FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() {
        processes.forEach { $0.terminate() }
        fleets.forEach { $0.stop() }
        try? FileManager.default.removeItem(atPath: scratch)
        super.tearDown()
    }

    func testScanThroughARelayAdding50MillisecondsOfRoundTripFindsEveryKeyOfEveryHost() throws {
        var options = TestFleet.Options(hosts: 3)
        options.addressesPerHost = 16
        let fleet = try TestFleet(options)
        fleets.append(fleet)
        let relayed = try startRelay(in: fleet, roundTripMilliseconds: 50)
        let inventory = relayed.map { "\($0.listening.address):\($0.listening.port)" }
        let found = try scan(inventory)
        XCTAssertEqual(found.count, relayed.count)
        for (entry, target) in zip(found, relayed) {
            XCTAssertNil(entry.error, "\(entry.name): no host may fail through the relay")
            XCTAssertEqual(entry.fingerprints, try expectedFingerprints(of: target.host), entry.name)
        }
    }

    func testServerRefusingConnectionsPastTwoAtOnceStillYieldsEveryKeyOfEveryEndpoint() throws {
        var options = TestFleet.Options(hosts: 1)
        options.addressesPerHost = 16
        options.maxStartups = "2:100:2"
        let fleet = try TestFleet(options)
        fleets.append(fleet)
        let host = fleet.hosts[0]
        let found = try scan(host.endpoints.map { "\($0.address):\($0.port)" })
        XCTAssertEqual(found.count, host.endpoints.count)
        let expected = try expectedFingerprints(of: host)
        for entry in found {
            XCTAssertNil(entry.error, "\(entry.name): a busy server must cost time, never a host")
            XCTAssertEqual(entry.fingerprints, expected, entry.name)
        }
    }

    func testScanWithAShortTimeoutOnASaturatedMachineFindsEveryKeyOfEveryEndpoint() throws {
        var options = TestFleet.Options(hosts: 4)
        options.addressesPerHost = 16
        options.rsaBits = 2048
        let fleet = try TestFleet(options)
        fleets.append(fleet)
        // Busy loops, two per core, stopped by PID in tearDown: the scan and the servers compete
        // with them for every core, so identifications and key-exchange replies come late.
        let cores = max(1, ProcessInfo.processInfo.activeProcessorCount)
        for _ in 0..<(2 * cores) { processes.append(try SpawnedProcess("/bin/sh", ["-c", "while :; do :; done"])) }
        let endpoints = fleet.hosts.flatMap { host in host.endpoints.map { (host, $0) } }
        let started = Date()
        let found = try scan(endpoints.map { $0.1.label }, timeout: 1)
        print("saturated machine: \(endpoints.count) endpoints in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
        XCTAssertEqual(found.count, endpoints.count)
        var expected: [Int: Set<String>] = [:]
        for host in fleet.hosts { expected[host.index] = try expectedFingerprints(of: host) }
        for (entry, endpoint) in zip(found, endpoints) {
            XCTAssertNil(entry.error, "\(entry.name): a timeout the machine's load explains must be retried, not reported")
            XCTAssertEqual(entry.fingerprints, expected[endpoint.0.index], entry.name)
        }
    }

    private struct Found {
        var name: String
        var error: String?
        var fingerprints: Set<String>
    }

    private struct Relayed {
        var listening: (address: String, port: Int)
        var host: TestFleet.Host
    }

    /// Every endpoint of `fleet` behind the delaying relay (bench/delay-relay), each on a
    /// loopback address of its own.
    private func startRelay(in fleet: TestFleet, roundTripMilliseconds: Int) throws -> [Relayed] {
        let targets = fleet.hosts.flatMap { host in host.endpoints.map { (host, $0) } }
        let targetsFile = scratch + "/relay-targets", readyFile = scratch + "/relay-ready"
        try targets.map { "\($0.1.address) \($0.1.port)\n" }.joined().write(toFile: targetsFile, atomically: true, encoding: .utf8)
        let relay = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("bench/delay-relay").path
        processes.append(try SpawnedProcess("/usr/bin/python3", [relay, "--targets", targetsFile, "--rtt-ms", "\(roundTripMilliseconds)",
                                                                  "--listen-net", "231", "--ready-file", readyFile]))
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: readyFile) {
            guard Date() < deadline else { throw XCTSkip("the relay did not start") }
            usleep(50_000)
        }
        let lines = try String(contentsOfFile: readyFile, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, targets.count)
        return zip(lines, targets).map { line, target in
            let fields = line.split(separator: " ")
            return Relayed(listening: (String(fields[0]), Int(fields[1]) ?? 0), host: target.0)
        }
    }

    private func scan(_ inventory: [String], timeout: Int = 10) throws -> [Found] {
        let file = scratch + "/inventory"
        try (inventory.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let run = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--inventory", file, "--known-hosts", "/dev/null",
                                                                "--format", "json", "--timeout", "\(timeout)"], limit: 300)
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout)) as? [String: Any], run.stderrText)
        let hosts = try XCTUnwrap(document["hosts"] as? [[String: Any]])
        return hosts.map { host in
            let keys = host["keys"] as? [[String: Any]] ?? []
            let error = host["error"].flatMap { $0 is NSNull ? nil : "\($0)" }
            return Found(name: host["name"] as? String ?? "?", error: error,
                         fingerprints: Set(keys.compactMap { $0["fingerprint"] as? String }))
        }
    }

    /// The fingerprints `ssh-keygen -lf` gives for the host's key files and its certificate.
    private func expectedFingerprints(of host: TestFleet.Host) throws -> Set<String> {
        var expected: Set<String> = []
        for file in host.publicKeyFiles + (host.certificateFile.map { [$0] } ?? []) {
            expected.insert(String(try Tool.check("/usr/bin/ssh-keygen", ["-lf", file]).split(separator: " ")[1]))
        }
        return expected
    }
}
