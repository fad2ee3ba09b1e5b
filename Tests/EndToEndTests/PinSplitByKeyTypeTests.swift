import FleetTrustCore
import FleetTrustTestFleet
import Foundation
import XCTest

/// A pin vouches only for the keys it names. The team pins all three real keys of a host; a man in
/// the middle (bench/split-relay, a real relay) passes the Ed25519 connection to the real sshd and
/// the others to a rogue sshd. The probe asks for each key type over its own connection, each
/// offering its algorithm at once as `ssh` does, so the relay routes it, as it routes `ssh`, by the
/// host-key algorithm it offers first. scan must say pin-mismatch (exit 2),
/// `sync --pins` must write none of the rogue keys, and `ssh -o HostKeyAlgorithms=ecdsa-sha2-nistp256`
/// through the relay must not accept the rogue with the resulting known_hosts. Two inventory rows
/// at the one endpoint behind a relay that shows the real Ed25519 key only once prove different
/// keys of one type for one known_hosts name: both are split-view, and no output saves either key.
final class PinSplitByKeyTypeTests: XCTestCase {
    private var real: LoopbackSSHD!
    private var rogue: LoopbackSSHD!
    private var relay: SpawnedProcess?
    private var scratch = ""
    private var port = 0

    override func setUpWithError() throws {
        scratch = NSTemporaryDirectory() + "ft-pin-split-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        real = try LoopbackSSHD()
        rogue = try LoopbackSSHD()
        port = try Loopback.freePort()
        try startRelay()
    }

    /// Starts the relay on `port`; a fresh relay sends its first connection to the real server again.
    /// `ed25519Once`: only the first Ed25519 offer reaches the real server.
    private func startRelay(ed25519Once: Bool = false) throws {
        relay?.terminate(grace: 1)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("bench/split-relay").path
        relay = try SpawnedProcess("/usr/bin/python3", [script, "--listen", "127.0.0.1:\(port)", "--real", "127.0.0.1:\(real.port)",
                                                        "--rogue", "127.0.0.1:\(rogue.port)", "--log", scratch + "/relay.log"]
                                                + (ed25519Once ? ["--ed25519-once"] : []),
                                   stderrPath: scratch + "/relay.err")
        let deadline = Date().addingTimeInterval(15)
        while !Loopback.accepts(address: "127.0.0.1", port: port) {
            guard relay?.isRunning == true, Date() < deadline else {
                return XCTFail("the relay did not start: " + ((try? String(contentsOfFile: scratch + "/relay.err", encoding: .utf8)) ?? ""))
            }
            usleep(20_000)
        }
    }

    override func tearDown() {
        relay?.terminate(grace: 1)
        real?.stop()
        rogue?.stop()
        try? FileManager.default.removeItem(atPath: scratch)
    }

    private func write(_ name: String, _ text: String) throws -> String {
        let path = scratch + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func testAPinOnTheRealEd25519KeyDoesNotVouchForRogueKeysOfOtherTypes() throws {
        let inventory = try write("hosts.txt", "127.0.0.1:\(port)\n")
        let knownHosts = try write("known_hosts", "")
        let pins = try write("pins", "[127.0.0.1]:\(port) " + real.publicKeys.map(\.sha256Fingerprint).joined(separator: " ") + "\n")
        let common = ["--inventory", inventory, "--known-hosts", knownHosts, "--pins", pins, "--timeout", "10"]

        let scan = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "json", "--no-history"] + common, limit: 120)
        let document = try XCTUnwrap(try? RecordedScan.decode(Data(scan.stdout)), scan.stderrText)
        let host = try XCTUnwrap(document.hosts.first)
        let proved = Set(host.keys.compactMap { try? HostKey(openSSHLine: $0.key).sha256Fingerprint })
        let log = (try? String(contentsOfFile: scratch + "/relay.log", encoding: .utf8)) ?? ""
        XCTAssertFalse(proved.isDisjoint(with: real.publicKeys.map(\.sha256Fingerprint)), "one type from the real server\n\(log)")
        XCTAssertFalse(proved.isDisjoint(with: rogue.publicKeys.map(\.sha256Fingerprint)), "the others from the rogue\n\(log)")
        XCTAssertTrue(log.contains(" kexinit real ssh-ed25519") && log.contains(" kexinit rogue ecdsa-sha2-nistp256"),
                      log + ((try? String(contentsOfFile: scratch + "/relay.err", encoding: .utf8)) ?? ""))
        XCTAssertEqual(host.status, .pinMismatch, "\(host.reason)")
        XCTAssertEqual(scan.status, 2, scan.stderrText)

        let sync = try ProgramRun.run(BuiltProducts.fleettrust, ["sync"] + common, limit: 120)
        XCTAssertEqual(sync.status, 2, sync.stderrText + String(decoding: sync.stdout, as: UTF8.self))
        let written = try String(contentsOfFile: knownHosts, encoding: .utf8)
        for key in rogue.publicKeys { XCTAssertFalse(written.contains(key.base64), "sync wrote a rogue key: \(written)") }

        let config = try write("ssh_config", """
            Host mitm
              HostName 127.0.0.1
              Port \(port)
              UserKnownHostsFile \(knownHosts)
              GlobalKnownHostsFile /dev/null
              HostKeyAlgorithms ecdsa-sha2-nistp256

            """)
        let oracle = try SSHOracle.handshake(host: "mitm", config: config)
        XCTAssertNotEqual(oracle.finding, .accepted, "ssh accepted the rogue ECDSA key: \(oracle.finalMessage)")
        XCTAssertNotEqual(oracle.finding, .acceptedByCA)
        XCTAssertTrue(((try? String(contentsOfFile: scratch + "/relay.log", encoding: .utf8)) ?? "").contains("kexinit rogue ecdsa-sha2-nistp256"),
                      "ssh was routed to the rogue server by the algorithm it offered")
    }

    /// The keys of a known_hosts file as `TYPE BASE64` (names and comments dropped).
    private func keys(in path: String) -> Set<String> {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return Set(text.split(separator: "\n").compactMap { line -> String? in
            let fields = line.split(separator: " ")
            guard !line.hasPrefix("#"), fields.count >= 3 else { return nil }
            return fields[1] + " " + fields[2]
        })
    }

    /// What the real `ssh -o StrictHostKeyChecking=accept-new` saves through the relay.
    private func keysSSHSavesOnFirstUse() throws -> Set<String> {
        let theirs = try write("known_hosts.ssh", "")
        let config = try write("ssh_config.accept-new", """
            Host mitm
              HostName 127.0.0.1
              Port \(port)
              UserKnownHostsFile \(theirs)
              GlobalKnownHostsFile /dev/null

            """)
        _ = try SSHOracle.handshake(host: "mitm", config: config, extraOptions: ["StrictHostKeyChecking=accept-new"])
        let saved = keys(in: theirs)
        XCTAssertEqual(saved.count, 1, "ssh saves the one key it meets")
        return saved
    }

    private func assertOnlyTheKeySSHMeets(_ written: Set<String>, _ output: String) throws {
        let log = (try? String(contentsOfFile: scratch + "/relay.log", encoding: .utf8)) ?? ""
        XCTAssertTrue(log.contains(" kexinit rogue "), "the probe met the rogue server too\n\(log)")
        for key in rogue.publicKeys { XCTAssertFalse(written.contains(key.type + " " + key.base64), "a rogue key was saved: \(written)") }
        XCTAssertEqual(written, try keysSSHSavesOnFirstUse(), "first use saves what ssh accept-new saves")
        XCTAssertTrue(output.contains("not saved: ") && output.contains("pin them, from fingerprints their owner gives you"), output)
    }

    func testSyncTrustOnFirstUseSavesOnlyTheKeySSHMeetsNotKeysFromOtherConnections() throws {
        let inventory = try write("hosts.txt", "127.0.0.1:\(port)\n")
        let knownHosts = try write("known_hosts", "")
        let sync = try ProgramRun.run(BuiltProducts.fleettrust, ["sync", "--trust-on-first-use", "--inventory", inventory,
                                                                 "--known-hosts", knownHosts, "--audit-log", scratch + "/audit.log", "--timeout", "10"], limit: 120)
        XCTAssertEqual(sync.status, 0, sync.stderrText)
        try assertOnlyTheKeySSHMeets(keys(in: knownHosts), sync.stderrText)
    }

    func testScanKnownHostsOnFirstUsePrintsOnlyTheKeySSHMeets() throws {
        let inventory = try write("hosts.txt", "127.0.0.1:\(port)\n")
        let knownHosts = try write("known_hosts", "")
        let scan = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "known-hosts", "--trust-on-first-use",
                                                                 "--inventory", inventory, "--known-hosts", knownHosts,
                                                                 "--no-history", "--timeout", "10"], limit: 120)
        let printed = try write("printed", String(decoding: scan.stdout, as: UTF8.self))
        XCTAssertEqual(keys(in: printed).count, 1, String(decoding: scan.stdout, as: UTF8.self) + scan.stderrText)
        try assertOnlyTheKeySSHMeets(keys(in: printed), scan.stderrText)
    }

    func testTwoRowsUnderOneKnownHostsNameThatProvedDifferentKeysAreASplitViewAndNothingIsSaved() throws {
        let inventory = try write("hosts.ini", "[all]\nweb1 ansible_host=127.0.0.1 ansible_port=\(port)\nweb1b ansible_host=127.0.0.1 ansible_port=\(port)\n")
        let knownHosts = try write("known_hosts", "")
        let common = ["--inventory", inventory, "--known-hosts", knownHosts, "--trust-on-first-use", "--timeout", "10"]
        try startRelay(ed25519Once: true)
        let scan = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "known-hosts", "--no-history"] + common, limit: 120)
        let log = (try? String(contentsOfFile: scratch + "/relay.log", encoding: .utf8)) ?? ""
        XCTAssertTrue(log.contains(" kexinit real ssh-ed25519") && log.contains(" kexinit rogue ssh-ed25519"), log)
        let printed = try write("printed", String(decoding: scan.stdout, as: UTF8.self))
        XCTAssertEqual(keys(in: printed), [], String(decoding: scan.stdout, as: UTF8.self) + scan.stderrText)
        XCTAssertEqual(scan.status, 2, scan.stderrText)

        try startRelay(ed25519Once: true)
        let sync = try ProgramRun.run(BuiltProducts.fleettrust, ["sync", "--audit-log", scratch + "/audit.log"] + common, limit: 120)
        XCTAssertEqual(sync.status, 2, sync.stderrText)
        XCTAssertEqual(keys(in: knownHosts), [], "sync saved a key of a split view")

        try startRelay(ed25519Once: true)
        let json = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "json", "--no-history", "--inventory", inventory,
                                                                 "--known-hosts", knownHosts, "--timeout", "10"], limit: 120)
        let document = try XCTUnwrap(try? RecordedScan.decode(Data(json.stdout)), json.stderrText)
        XCTAssertEqual(document.hosts.map(\.status), [.splitView, .splitView], document.hosts.map(\.reason).joined(separator: "\n"))
        XCTAssertTrue(document.hosts.allSatisfy { $0.reason.contains("one scan proved different keys") }, document.hosts.map(\.reason).joined(separator: "\n"))
    }
}
