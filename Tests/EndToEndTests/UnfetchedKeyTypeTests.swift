import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// A key type the server offers but whose connection failed is named in the scan document, and
/// the host's status stays the one `ssh` agrees with. A real sshd (Ed25519, ECDSA P-256, RSA)
/// sits behind a relay that spoils only the connections asking for one other key type first:
/// `ssh`'s connection, and the probe's connection shaped like it, meet the Ed25519 key untouched,
/// so the host stays `trusted` (exit 0) as `ssh` says; the spoiled type is listed in
/// `unfetched_keys` with its failure code, in the table's reason, and again after a replay and a merge.
final class UnfetchedKeyTypeTests: XCTestCase {
    private var sshd: LoopbackSSHD!
    private var relay: HostKeyTypeTamperingRelay?
    private var scratch = ""

    override func setUpWithError() throws {
        scratch = NSTemporaryDirectory() + "ft-unfetched-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        sshd = try LoopbackSSHD(ipv6: false)
    }

    override func tearDown() {
        relay?.close()
        sshd?.stop()
        try? FileManager.default.removeItem(atPath: scratch)
        super.tearDown()
    }

    /// Starts the relay and writes an inventory of it and a known_hosts holding all three real keys.
    private func start(_ tampering: HostKeyTypeTamperingRelay.Tampering, spoiling prefix: String) throws -> HostKeyTypeTamperingRelay {
        let relay = try HostKeyTypeTamperingRelay(backendPort: sshd.port, tampering: tampering, spoiledPrefix: prefix)
        self.relay = relay
        try "127.0.0.1:\(relay.port)\n".write(toFile: path("hosts.txt"), atomically: true, encoding: .utf8)
        try sshd.publicKeys.map { "[127.0.0.1]:\(relay.port) \($0.openSSHLine)\n" }.joined()
            .write(toFile: path("known_hosts"), atomically: true, encoding: .utf8)
        return relay
    }

    private func path(_ name: String) -> String { scratch + "/" + name }

    private var common: [String] { ["--known-hosts", path("known_hosts"), "--no-history", "--timeout", "10"] }

    /// One `scan --format json` of the relay, kept as `SCANNER.json`; the run and its one host entry.
    private func scan(scanner: String = "first") throws -> (run: ProgramRun, host: [String: Any]) {
        let run = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "json", "--inventory", path("hosts.txt"),
                                                                "--scanner-name", scanner] + common, limit: 60)
        try Data(run.stdout).write(to: URL(fileURLWithPath: path(scanner + ".json")))
        return (run, try Self.onlyHost(run))
    }

    private static func hosts(_ run: ProgramRun) throws -> [[String: Any]] {
        let document = try XCTUnwrap(try? JSONSerialization.jsonObject(with: Data(run.stdout)) as? [String: Any],
                                     "no JSON document: \(run.stderrText)")
        return try XCTUnwrap(document["hosts"] as? [[String: Any]], "\(document)")
    }

    private static func onlyHost(_ run: ProgramRun) throws -> [String: Any] {
        let hosts = try hosts(run)
        XCTAssertEqual(hosts.count, 1)
        return try XCTUnwrap(hosts.first)
    }

    /// The `unfetched_keys` of a host entry as (algorithm, code) pairs; a failure when the field is missing.
    private func unfetched(_ host: [String: Any], file: StaticString = #filePath, line: UInt = #line) -> [(algorithm: String, code: String)] {
        guard let entries = host["unfetched_keys"] as? [[String: Any]] else {
            XCTFail("an SSH host entry always has unfetched_keys: \(host)", file: file, line: line)
            return []
        }
        return entries.map { entry in
            let error = entry["error"] as? [String: Any] ?? [:]
            XCTAssertNotNil(error["stage"] as? String, "\(entry)", file: file, line: line)
            XCTAssertFalse((error["message"] as? String ?? "").isEmpty, "\(entry)", file: file, line: line)
            return (entry["algorithm"] as? String ?? "", error["code"] as? String ?? "")
        }
    }

    private func fingerprints(_ host: [String: Any]) -> Set<String> {
        Set((host["keys"] as? [[String: Any]] ?? []).compactMap { $0["fingerprint"] as? String })
    }

    private var realFingerprints: Set<String> { Set(sshd.publicKeys.map(\.sha256Fingerprint)) }

    /// Scans the relay and checks what every spoiled case shares: the relay spoiled exactly the
    /// connections offering `prefix` first (at least one), the host stays `trusted` (exit 0) with
    /// the two other real keys, and `unfetched_keys` names `algorithm` alone. Returns its codes.
    private func scanExpectingUnfetched(_ algorithm: String, keyType: String, spoiledPrefix prefix: String,
                                        _ relay: HostKeyTypeTamperingRelay) throws -> [String] {
        let (run, host) = try scan()
        let connections = relay.connections
        XCTAssertTrue(connections.contains(where: \.spoiled), "the relay spoiled no connection: \(connections)")
        for connection in connections {
            XCTAssertEqual(connection.spoiled, connection.firstHostKeyAlgorithm?.hasPrefix(prefix) == true, "\(connections)")
        }
        XCTAssertEqual(host["status"] as? String, "trusted", "\(host)")
        XCTAssertEqual(run.status, 0, run.stderrText)
        let proved = fingerprints(host)
        XCTAssertEqual(proved.count, 2, "\(host)")
        XCTAssertTrue(proved.isSubset(of: realFingerprints), "\(host)")
        XCTAssertFalse(proved.contains(try XCTUnwrap(sshd.key(ofType: keyType)).sha256Fingerprint), "\(host)")
        let missing = unfetched(host)
        XCTAssertEqual(missing.map(\.algorithm), [algorithm], "\(host)")
        return missing.map(\.code)
    }

    func testAFollowerWhoseReplySignatureFailsIsNamedAndTheHostStaysTrustedAsSSHSays() throws {
        let relay = try start(.flipReplySignature, spoiling: "ecdsa-")
        let codes = try scanExpectingUnfetched("ecdsa-sha2-nistp256", keyType: "ecdsa-sha2-nistp256", spoiledPrefix: "ecdsa-", relay)
        XCTAssertEqual(codes, ["bad-signature"])

        // The oracle: through the same relay `ssh` gets past host-key checking; asking for ECDSA
        // only, it meets the spoiled reply and fails its signature check as the probe did.
        let ssh = try SSHOracle.check(name: "127.0.0.1", port: relay.port, knownHosts: path("known_hosts"))
        XCTAssertEqual(ssh.verdict, .trusted, ssh.transcript)
        let sshECDSA = try SSHOracle.check(name: "127.0.0.1", port: relay.port, knownHosts: path("known_hosts"),
                                           extraOptions: ["-o", "HostKeyAlgorithms=ecdsa-sha2-nistp256"])
        XCTAssertEqual(SSHOracle.classifyHandshake(sshECDSA.transcript).finding, .incorrectSignature, sshECDSA.transcript)
    }

    func testAFollowerConnectionClosedBeforeTheExchangeIsNamedWithAConnectionFailure() throws {
        let relay = try start(.close, spoiling: "rsa-")
        let codes = try scanExpectingUnfetched("rsa-sha2-512", keyType: "ssh-rsa", spoiledPrefix: "rsa-", relay)
        print("unfetched rsa-sha2-512 after a closed connection: code \(codes)")
        XCTAssertTrue(!codes.isEmpty && codes.allSatisfy { ["connection-closed", "kex-failed"].contains($0) }, "\(codes)")
        let ssh = try SSHOracle.check(name: "127.0.0.1", port: relay.port, knownHosts: path("known_hosts"))
        XCTAssertEqual(ssh.verdict, .trusted, ssh.transcript)
        let sshRSA = try SSHOracle.check(name: "127.0.0.1", port: relay.port, knownHosts: path("known_hosts"),
                                         extraOptions: ["-o", "HostKeyAlgorithms=rsa-sha2-512"])
        XCTAssertTrue(sshRSA.transcript.contains("Connection closed by"), "ssh asking for RSA only is closed too: \(sshRSA.transcript)")
    }

    func testTheRelayPassingEverythingCostsNoKey() throws {
        let relay = try start(.none, spoiling: "ecdsa-")
        let (run, host) = try scan()
        XCTAssertFalse(relay.connections.isEmpty)
        XCTAssertFalse(relay.connections.contains(where: \.spoiled), "\(relay.connections)")
        XCTAssertEqual(host["status"] as? String, "trusted", "\(host)")
        XCTAssertEqual(run.status, 0, run.stderrText)
        XCTAssertEqual(fingerprints(host), realFingerprints, "\(host)")
        XCTAssertTrue(unfetched(host).isEmpty, "\(host)")
    }

    func testAReplayAMergeAndTheTableSayWhichKeyTypeWasNotFetched() throws {
        _ = try start(.flipReplySignature, spoiling: "ecdsa-")
        let (_, scanned) = try scan()
        let recorded = unfetched(scanned)
        XCTAssertEqual(recorded.map(\.algorithm), ["ecdsa-sha2-nistp256"], "\(scanned)")

        let replay = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--replay", path("first.json"), "--format", "json"] + common, limit: 60)
        let replayed = try Self.onlyHost(replay)
        XCTAssertEqual(replayed["status"] as? String, scanned["status"] as? String, "\(replayed)")
        XCTAssertEqual(replay.status, 0, replay.stderrText)
        let again = unfetched(replayed)
        XCTAssertEqual(again.map(\.algorithm), recorded.map(\.algorithm))
        XCTAssertEqual(again.map(\.code), recorded.map(\.code))

        _ = try scan(scanner: "second")
        let merge = try ProgramRun.run(BuiltProducts.fleettrust, ["merge", path("first.json"), path("second.json")], limit: 60)
        XCTAssertEqual(merge.status, 0, merge.stderrText)
        let merged = try Self.hosts(merge)
        XCTAssertEqual(merged.count, 2, "one entry per scanner")
        for entry in merged {
            XCTAssertEqual(unfetched(entry).map(\.algorithm), ["ecdsa-sha2-nistp256"], "\(entry)")
            XCTAssertEqual(unfetched(entry).map(\.code), ["bad-signature"], "\(entry)")
        }

        let table = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "table", "--inventory", path("hosts.txt")] + common, limit: 60)
        XCTAssertEqual(table.status, 0, table.stderrText)
        XCTAssertTrue(table.stdoutText.contains("not fetched: ecdsa-sha2-nistp256 (bad-signature)"), table.stdoutText)
    }
}
