import XCTest
@testable import FleetTrustCore

/// The streamed scan document is the one `ScanDocument` encodes whole, byte for byte, whatever
/// the hosts hold (empty and full lists, certificates of none, failures, drift, odd text).
final class ScanDocumentStreamTests: XCTestCase {
    private let date = Date(timeIntervalSince1970: 1_790_000_000)

    /// Hosts judged by the real judge: trusted, changed, new with two keys and a history,
    /// unreachable, and one whose name needs escaping.
    private func judgedHosts() -> [JudgedHost] {
        let knownHosts = TestKeys.file("""
            trusted.example \(TestKeys.a.openSSHLine)
            [changed.example]:2222 \(TestKeys.b.openSSHLine)

            """)
        var judge = FleetJudge(knownHosts: KnownHosts(files: [knownHosts]), pins: nil)
        judge.history = FleetHistory(hosts: ["new.example": HostHistory(
            keys: [KeyHistory(key: KeyIdentity(type: "ssh-ed25519", fingerprint: TestKeys.b.sha256Fingerprint),
                              firstSeen: 1_700_000_000_000, lastSeen: 1_700_000_000_000, lastSighting: 1, sightings: 1)],
            latest: [KeyIdentity(type: "ssh-ed25519", fingerprint: TestKeys.b.sha256Fingerprint)], latestComplete: true)])
        let probes: [(InventoryHost, ProbeResult)] = [
            (InventoryHost(name: "trusted.example", address: "trusted.example", user: "ops", groups: ["web", "prod"]),
             ProbeResult(host: "trusted.example", port: 22, peerAddress: "192.0.2.1", keys: [DiscoveredKey(key: TestKeys.a)])),
            (InventoryHost(name: "changed.example", address: "changed.example", port: 2222),
             ProbeResult(host: "changed.example", port: 2222, keys: [DiscoveredKey(key: TestKeys.c, handshakeMilliseconds: 12.34)])),
            (InventoryHost(name: "new.example", address: "new.example"),
             ProbeResult(host: "new.example", port: 22, keys: [DiscoveredKey(key: TestKeys.a), DiscoveredKey(key: TestKeys.ecdsa)],
                         serverVersion: "SSH-2.0-OpenSSH_9.2", serverHostKeyAlgorithms: ["ssh-ed25519", "ecdsa-sha2-nistp256"])),
            (InventoryHost(name: "down.example", address: "down.example"),
             ProbeResult(host: "down.example", port: 22, failures: [ProbeFailure(stage: .connect, code: .connectionRefused,
                                                                                   message: "connection refused \"quoted\" / slash")])),
            (InventoryHost(name: "odd \"name\" \\ é", address: "odd.example"),
             ProbeResult(host: "odd.example", port: 22, keys: [DiscoveredKey(key: TestKeys.b)])),
        ]
        return probes.map { judge.judge($0.0, $0.1) }
    }

    private func whole(_ judged: [JudgedHost], skipped: [SkippedInventoryEntry]) throws -> Data {
        let report = ScanReport(generatedAt: date, knownHostsFiles: ["/etc/ssh/ssh_known_hosts", "~/.ssh/known_hosts"],
                                pinFiles: ["pins"], judged: judged)
        return try ScanDocument(report: report, skipped: skipped).encoded() + Data("\n".utf8)
    }

    private func streamed(_ judged: [JudgedHost], skipped: [SkippedInventoryEntry]) throws -> (Data, Int32, Int) {
        var out = Data()
        var pieces = 0
        var stream = ScanDocumentStream(generatedAt: date, knownHostsFiles: ["/etc/ssh/ssh_known_hosts", "~/.ssh/known_hosts"],
                                        pinFiles: ["pins"]) { out.append($0); pieces += 1 }
        for host in judged { try stream.append(host) }
        try stream.finish(skipped: skipped)
        return (out, stream.exitStatus, pieces)
    }

    func testTheStreamedDocumentIsTheWholeDocumentByteForByte() throws {
        let hosts = judgedHosts()
        XCTAssertEqual(Set(hosts.map(\.status)), [.trusted, .changed, .new, .unreachable])
        let skipped = [SkippedInventoryEntry(file: "hosts.ini", line: 7, reason: "bad port \"x\"")]
        for count in [0, 1, 2, hosts.count] {
            for skip in [[], skipped] {
                let expected = try whole(Array(hosts.prefix(count)), skipped: skip)
                let (actual, status, pieces) = try streamed(Array(hosts.prefix(count)), skipped: skip)
                XCTAssertEqual(String(decoding: actual, as: UTF8.self), String(decoding: expected, as: UTF8.self),
                               "\(count) hosts, \(skip.count) skipped")
                XCTAssertEqual(status, ScanReport.exitStatus(for: Array(hosts.prefix(count))))
                if count > 0 { XCTAssertGreaterThan(pieces, count, "written host by host") }
            }
        }
    }

    func testARecordedHostWhoseNameSSHRefusesIsRefusedOnReplayNotTrusted() throws {
        // A document written by hand (or by another tool): the host's address carries a shell payload
        // and its key is recorded in known_hosts; a live scan refuses such a host at stage proxy.
        let unsafe = InventoryHost(name: "web1", address: "127.0.0.21;touch x")
        let knownHosts = KnownHosts(files: [TestKeys.file("127.0.0.21;touch x \(TestKeys.a.openSSHLine)\n")])
        let judge = FleetJudge(knownHosts: knownHosts, pins: nil)
        let recorded = judge.judge(unsafe, ProbeResult(host: unsafe.address, port: 22, keys: [DiscoveredKey(key: TestKeys.a)]))
        let (data, _, _) = try streamed([recorded], skipped: [])
        let replayed = try ScanReplay.load(data, source: "crafted.json")
        XCTAssertEqual(replayed.count, 1)
        XCTAssertEqual(replayed[0].result.keys, [], "nothing recorded for a refused host is judged")
        XCTAssertEqual(replayed[0].result.failures.map(\.code), [.unsafeName])
        let again = judge.judge(replayed[0].host, replayed[0].result)
        XCTAssertNotEqual(again.status, .trusted)
        XCTAssertEqual(again.failure?.stage, .proxy)
    }

    func testTheStreamedDocumentReplaysAsTheSameHosts() throws {
        let hosts = judgedHosts()
        let (data, status, _) = try streamed(hosts, skipped: [])
        XCTAssertEqual(status, 2)
        let report = try ScanReport.decode(data)
        XCTAssertEqual(report.hosts.map(\.name), hosts.map(\.labels.name.value))
        XCTAssertEqual(report.summary.byStatus, ["trusted": 1, "changed": 1, "new": 2, "unreachable": 1])
        XCTAssertEqual(report.summary.exitStatus, 2)
        XCTAssertEqual(try ScanReplay.load(data, source: "scan.json").count, hosts.count)
    }
}
