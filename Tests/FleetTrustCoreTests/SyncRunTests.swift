import Foundation
import XCTest
@testable import FleetTrustCore

/// `sync`'s plan carried out through the one editor and audit log, and the words it prints.
final class SyncRunTests: XCTestCase {
    private var dir: StoreTestDirectory!

    override func setUpWithError() throws { dir = try StoreTestDirectory() }
    override func tearDown() { dir.remove() }

    private func plan(_ knownHosts: String, hosts: [InventoryHost]) throws -> SyncPlan {
        try dir.write("kh", knownHosts)
        let judge = FleetJudge(knownHosts: try KnownHosts.read(paths: [dir.file("kh")]), pins: nil)
        let judged = hosts.map { judge.judge($0, ProbeResult(host: $0.address, port: 22, keys: [DiscoveredKey(key: TestKeys.a)])) }
        return SyncPlan(judged, trustOnFirstUse: true)
    }

    func testANewHostIsWrittenOnceLoggedAsSyncAndSummarised() throws {
        let hosts = [InventoryHost(name: "web1", address: "10.0.0.5"), InventoryHost(name: "alias", address: "10.0.0.5"),
                     InventoryHost(name: "db", address: "10.0.0.6")]
        let plan = try plan("10.0.0.6 \(TestKeys.b.openSSHLine)\n", hosts: hosts)
        let log = AuditLog(path: dir.file("audit.jsonl"))
        let run = SyncRun.write(plan, editor: TrustStoreEditor(hashNames: false), log: log, user: "alice")
        XCTAssertEqual(dir.text("kh"), "10.0.0.6 \(TestKeys.b.openSSHLine)\n10.0.0.5 \(TestKeys.a.openSSHLine)\n")
        XCTAssertEqual(run.output.count, 2)
        XCTAssertTrue(run.output[0].hasPrefix("added web1 (10.0.0.5:22): 1 key under 10.0.0.5 to "), run.output[0])
        XCTAssertTrue(run.output[1].hasSuffix(": same entry as web1"), run.output[1])
        XCTAssertEqual(SyncRun.notes(plan).count, 1, "the changed host is named")
        XCTAssertTrue(SyncRun.notes(plan)[0].hasPrefix("db (10.0.0.6:22): not touched: changed"), SyncRun.notes(plan)[0])
        XCTAssertEqual(run.summary(plan, skipped: 2, check: false),
                       "sync: added 2 hosts (1 key); 1 refused (never touched), 2 inventory entries skipped")
        let record = try JSONDecoder().decode(AuditLog.Record.self, from: Data(dir.text("audit.jsonl").utf8))
        XCTAssertEqual([record.action, record.method, record.outcome, record.host],
                       ["sync", "sync (trust on first use) -> \(dir.file("kh"))", "saved", "web1"])
        XCTAssertEqual(record.newFingerprints, [TestKeys.a.sha256Fingerprint])
    }

    func testAWriteRefusedBecauseTheFileChangedIsAFailureLoggedAsNotSaved() throws {
        let plan = try plan("", hosts: [InventoryHost(name: "web1", address: "10.0.0.5")])
        try dir.write("kh", "10.0.0.5 \(TestKeys.b.openSSHLine)\n")
        let run = SyncRun.write(plan, editor: TrustStoreEditor(hashNames: false), log: AuditLog(path: dir.file("audit.jsonl")), user: "alice")
        XCTAssertEqual([run.added, run.failed], [0, 1])
        XCTAssertEqual(dir.text("kh"), "10.0.0.5 \(TestKeys.b.openSSHLine)\n")
        XCTAssertTrue(run.problems[0].hasPrefix("web1 (10.0.0.5:22): not added: "), run.problems[0])
        XCTAssertTrue(dir.text("audit.jsonl").contains("\"outcome\":\"not saved: "), dir.text("audit.jsonl"))
        XCTAssertEqual(plan.exitStatus(failedWrites: run.failed), 1)
    }

    func testCheckShowsTheLinesEachFileWouldGainAndWritesNothing() throws {
        let plan = try plan("", hosts: [InventoryHost(name: "web1", address: "10.0.0.5")])
        let run = SyncRun.diff(plan, hashed: false)
        XCTAssertEqual(run.output, ["--- \(dir.file("kh"))", "+++ \(dir.file("kh"))", "+10.0.0.5 \(TestKeys.a.openSSHLine)"])
        XCTAssertEqual(run.summary(plan, skipped: 0, check: true), "sync --check: would add 1 host (1 key)")
        XCTAssertEqual(dir.text("kh"), "")
    }
}
