import XCTest
@testable import FleetTrustCore

/// The scan document (version 3) is written host by host in its layout, one compact host per
/// line, whatever the hosts hold (empty and full lists, failures, drift, odd text), and stays
/// linear in hosts however many share a key.
final class ScanDocumentWriterTests: XCTestCase {
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
        let shared = SharedKeyTable(names: probes.map { CleanText($0.0.name).value }, results: probes.map(\.1))
        return probes.map { judge.judge($0.0, $0.1, keySharing: shared.sharing($0.1)) }
    }

    private func streamed(_ judged: [JudgedHost], skipped: [SkippedInventoryEntry]) throws -> (Data, Int32, Int) {
        var out = Data()
        var pieces = 0
        let shared = SharedKeyTable(names: judged.map(\.labels.name.value), results: judged.map(\.probe))
        var writer = ScanDocumentWriter(generatedAt: date, knownHostsFiles: ["/etc/ssh/ssh_known_hosts", "~/.ssh/known_hosts"],
                                        pinFiles: ["pins"], sharedKeys: shared) { out.append($0); pieces += 1 }
        for host in judged { try writer.append(host) }
        let status = ExitStatusRule.run(hosts: ExitStatusRule.hosts(judged), skipped: !skipped.isEmpty)
        try writer.finish(skipped: skipped, exitStatus: status)
        return (out, status, pieces)
    }

    func testTheDocumentIsOneHostPerLineInSortedFieldOrderAndValidJSON() throws {
        let hosts = judgedHosts()
        XCTAssertEqual(Set(hosts.map(\.status)), [.trusted, .changed, .new, .unreachable])
        let skipped = [SkippedInventoryEntry(file: "hosts.ini", line: 7, reason: "bad port \"x\"")]
        for count in [0, 1, 2, hosts.count] {
            for skip in [[], skipped] {
                let (data, status, pieces) = try streamed(Array(hosts.prefix(count)), skipped: skip)
                let text = String(decoding: data, as: UTF8.self)
                let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any], text)
                XCTAssertEqual((document["summary"] as? [String: Any])?["exit_status"] as? Int, Int(status))
                XCTAssertEqual(document["version"] as? Int, 3)
                var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                XCTAssertEqual(lines.removeLast(), "", "the document ends with a line break")
                XCTAssertEqual(lines.first, "{")
                XCTAssertEqual(lines.last, "}")
                XCTAssertEqual(lines[1], #"  "generated_at" : "2026-09-21T14:13:20Z","#)
                XCTAssertEqual(lines[2], #"  "hosts" : ["#)
                let hostLines = Array(lines[3..<(3 + count)])
                for (index, line) in hostLines.enumerated() {
                    XCTAssertEqual(line.hasSuffix(","), index < count - 1, line)
                    let entry = String(line.dropLast(line.hasSuffix(",") ? 1 : 0))
                    XCTAssertEqual(try JSONSerialization.jsonObject(with: Data(entry.utf8)) as? NSDictionary,
                                   (document["hosts"] as? [Any])?[index] as? NSDictionary)
                    let keys = try XCTUnwrap(entry.range(of: #"{"address":"#)).lowerBound
                    XCTAssertEqual(keys, entry.startIndex, "keys sorted: address first")
                }
                XCTAssertEqual(lines[3 + count], "  ],")
                let fields = lines[(4 + count)..<(lines.count - 1)]
                XCTAssertEqual(fields.map { String($0.split(separator: "\"")[0...1].joined(separator: "\"")) + "\"" },
                               ["  \"known_hosts_files\"", "  \"pin_files\"", "  \"shared_keys\"", "  \"skipped\"",
                                "  \"summary\"", "  \"version\""])
                XCTAssertTrue(fields.dropLast().allSatisfy { $0.hasSuffix(",") } && fields.last?.hasSuffix(",") == false)
                if count > 0 { XCTAssertGreaterThan(pieces, count, "written host by host") }
            }
        }
    }

    func testSharedKeysAreWrittenOnceAndEachHostsKeyCarriesItsCount() throws {
        let hosts = judgedHosts()
        let (data, _, _) = try streamed(hosts, skipped: [])
        let document = try RecordedScan.decode(data)
        // Key a: trusted.example and new.example; key b: odd "name" and nobody else (changed.example shows c).
        XCTAssertEqual(document.sharedKeys, [SharedKeyTable.Entry(fingerprint: TestKeys.a.sha256Fingerprint, type: "ssh-ed25519",
                                                                  hosts: ["new.example", "trusted.example"])])
        XCTAssertEqual(document.hosts[0].keys.map(\.sharedBy), [2])
        XCTAssertEqual(document.hosts[2].keys.map(\.sharedBy), [2, nil])
        XCTAssertEqual(document.hosts[4].keys.map(\.sharedBy), [nil])
    }

    func testOutputStaysLinearInHostsWhenEveryHostSharesOneKey() throws {
        let judge = FleetJudge(knownHosts: KnownHosts(files: []), pins: nil)
        func size(_ count: Int) throws -> Int {
            let judged = (0..<count).map { index in
                judge.judge(InventoryHost(name: "clone-\(100_000 + index)"),
                            ProbeResult(host: "clone", port: 22, keys: [DiscoveredKey(key: TestKeys.a)]))
            }
            let shared = SharedKeyTable(names: judged.map(\.labels.name.value), results: judged.map(\.probe))
            let sharing = judged.map { shared.sharing($0.probe) }
            XCTAssertEqual(sharing.last?.widest, count)
            let rejudged = judged.indices.map { judge.judge(judged[$0].host, judged[$0].probe, keySharing: sharing[$0]) }
            return try ScanReport(generatedAt: date, knownHostsFiles: [], pinFiles: [], judged: rejudged).encoded().count
        }
        let hundred = try size(100), thousand = try size(1000)
        XCTAssertLessThan(Double(thousand), Double(hundred) * 10.5, "10x the hosts, at most ~10x the bytes")
    }

    func testEachHostRecordsItsScannerAndWhenItsProbeFinished() throws {
        let judge = FleetJudge(knownHosts: KnownHosts(files: []), pins: nil)
        var probe = ProbeResult(host: "a", port: 22, keys: [DiscoveredKey(key: TestKeys.a)])
        probe.scanner = CleanText("jump-eu\u{1b}[31m")
        probe.finishedAt = Date(timeIntervalSince1970: 1_790_000_042)
        let judged = [judge.judge(InventoryHost(name: "a"), probe),
                      judge.judge(InventoryHost(name: "b"), ProbeResult(host: "b", port: 22, keys: [DiscoveredKey(key: TestKeys.b)]))]
        let data = try ScanReport(generatedAt: date, knownHostsFiles: [], pinFiles: [], judged: judged).encoded()
        let hosts = try RecordedScan.decode(data).hosts
        XCTAssertEqual(hosts.map(\.scannedFrom), [CleanText("jump-eu\u{1b}[31m").value, "unknown"])
        XCTAssertFalse(hosts[0].scannedFrom?.contains("\u{1b}") ?? true, "cleaned")
        XCTAssertEqual(hosts.map(\.scannedAt), ["2026-09-21T14:14:02Z", "2026-09-21T14:13:20Z"])
        let replayed = try ScanReplay.load(data, source: "scan.json")
        XCTAssertEqual(replayed[0].result.scanner, hosts[0].scannedFrom.map { CleanText($0) })
        XCTAssertEqual(replayed[0].result.finishedAt, probe.finishedAt)
        XCTAssertEqual(replayed[1].result.finishedAt, date, "no scanned_at of its own: the document's time")
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
        let report = try RecordedScan.decode(data)
        XCTAssertEqual(report.hosts.map(\.name), hosts.map(\.labels.name.value))
        XCTAssertEqual(report.summary.byStatus, ["trusted": 1, "changed": 1, "new": 2, "unreachable": 1])
        XCTAssertEqual(report.summary.exitStatus, 2)
        XCTAssertEqual(try ScanReplay.load(data, source: "scan.json").count, hosts.count)
    }
}
