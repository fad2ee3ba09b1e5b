import Foundation
import GRDB
import XCTest
@testable import FleetTrustCore

/// The history remembers a host by the name `ssh` looks it up under, not by its inventory name:
/// `web1` in prod and `web1` in staging at another endpoint are two hosts (no false `changed`
/// drift, no REVERTED warning), and a history written before is upgraded in place. Real SQLite.
final class HistoryLookupKeyTests: XCTestCase {
    private var directory: StoreTestDirectory!
    private let prod = InventoryHost(name: "web1", address: "10.0.0.5")
    private let staging = InventoryHost(name: "web1", address: "10.9.0.5", port: 2222)

    override func setUpWithError() throws { directory = try StoreTestDirectory() }
    override func tearDown() { directory.remove() }

    private func judged(_ host: InventoryHost, _ key: HostKey, history: FleetHistory?) -> JudgedHost {
        var judge = FleetJudge(knownHosts: KnownHosts(files: []), pins: nil)
        judge.history = history
        return judge.judge(host, ProbeResult(host: host.address, port: host.port, keys: [DiscoveredKey(key: key)]))
    }

    func testTheSameInventoryNameAtTwoEndpointsIsTwoHistories() throws {
        let store = try XCTUnwrap(try HistoryStore.open(path: directory.file("history.sqlite")))
        var time: UInt64 = 1_000
        // Alternating scans of the two inventories, each endpoint always presenting its own key.
        for _ in 0..<2 {
            for (host, key) in [(prod, TestKeys.a), (staging, TestKeys.b)] {
                let remembered = try store.history(for: [host])
                let judgedHost = judged(host, key, history: remembered)
                XCTAssertNotEqual(judgedHost.drift?.kind, .changed, "\(host.endpointLabel)")
                XCTAssertNotEqual(judgedHost.drift?.kind, .reverted, "\(host.endpointLabel)")
                XCTAssertEqual(ExitStatusRule.host(judgedHost), 1, "new, never an alarm")
                try store.record([try XCTUnwrap(HistorySighting(judgedHost, source: .scan, seenAt: time))])
                time += 1_000
            }
        }
        let both = try store.history(for: [prod, staging])
        XCTAssertEqual(Set(both.hosts.keys), ["10.0.0.5", "[10.9.0.5]:2222"])
        XCTAssertEqual(both.hosts["10.0.0.5"]?.keys.map(\.key.fingerprint), [TestKeys.a.sha256Fingerprint])
        XCTAssertEqual(judged(staging, TestKeys.b, history: both).drift?.kind, DriftKind.none)
        var alias = prod
        alias.name = "web1-by-another-name"
        XCTAssertEqual(judged(alias, TestKeys.c, history: both).drift?.kind, .changed, "one lookup name under two inventory names is one host")
    }

    /// Reading (a read-only open: `history`, `tidy`, a read-only scan) never writes the file: an
    /// older layout is read through an upgraded copy; the next writer upgrades the file itself.
    func testAnOlderHistoryIsReadWithoutWritingItThenUpgradedInPlaceByAWriter() throws {
        let path = directory.file("old.sqlite")
        let queue = try DatabaseQueue(path: path)
        try HistorySchema.migrator.migrate(queue, upTo: "v1-sightings")
        try queue.write { db in
            for (id, host, endpoint, key) in [(1, "web1", "10.0.0.5:22", "A"), (2, "web1", "[10.9.0.5]:2222", "B"), (3, "web1", "10.0.0.5:22", "A")] {
                try db.execute(sql: "INSERT INTO sighting (id, host, endpoint, seen_at, source, complete) VALUES (?, ?, ?, ?, 'scan', 1)",
                               arguments: [id, host, endpoint, id * 1000])
                try db.execute(sql: "INSERT INTO sighting_key VALUES (?, 'ssh-ed25519', ?)", arguments: [id, "SHA256:" + key])
                try db.execute(sql: "INSERT OR REPLACE INTO host_latest VALUES (?, ?, 1)", arguments: [host, id])
            }
        }
        try queue.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let store = try XCTUnwrap(try HistoryStore.open(path: path, readOnly: true))
        let history = try store.history(for: [prod, staging])
        XCTAssertEqual(history.hosts["10.0.0.5"]?.keys.map(\.key.fingerprint), ["SHA256:A"])
        XCTAssertEqual(history.hosts["10.0.0.5"]?.keys.first?.sightings, 2)
        XCTAssertEqual(history.hosts["[10.9.0.5]:2222"]?.latest, [KeyIdentity(type: "ssh-ed25519", fingerprint: "SHA256:B")])
        XCTAssertEqual(try store.sightings(of: "web1").count, 3, "every recorded probe is kept")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before, "a read-only open wrote the file")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-wal"), "a read-only open made a WAL")

        let writer = try XCTUnwrap(try HistoryStore.open(path: path, readOnly: false))
        XCTAssertEqual(try writer.history(for: [prod]).hosts["10.0.0.5"]?.keys.first?.sightings, 2)
        let upgraded = try DatabaseQueue(path: path)
        XCTAssertTrue(try upgraded.read(HistorySchema.migrator.hasCompletedMigrations), "a writer upgrades the file in place")
        try upgraded.close()
    }
}
