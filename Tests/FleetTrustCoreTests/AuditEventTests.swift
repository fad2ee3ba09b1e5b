import Foundation
import XCTest
@testable import FleetTrustCore

/// Each audit event encodes to the audit log's line format, unchanged since the log was the
/// dashboard's alone (action, method and outcome words as before).
final class AuditEventTests: XCTestCase {
    private let time = Date(timeIntervalSince1970: 1_790_000_000.25)
    private let host = InventoryHost(name: "web1", address: "10.0.0.1", port: 2201)

    private func record(_ action: AuditEvent.Action, host: InventoryHost?, outcome: AuditEvent.Outcome) -> AuditLog.Record {
        AuditEvent(time: time, user: "alice", action: action, host: host, names: ["[10.0.0.1]:2201"], oldFingerprints: ["SHA256:old"],
                   newFingerprints: ["SHA256:new"], oldEntries: ["kh:3: [10.0.0.1]:2201 ssh-ed25519 AAAA"], outcome: outcome).record
    }

    func testADashboardDecisionIsItsKindWithTheFileWritten() {
        let saved = record(.decided(.replace, file: "/k/known_hosts"), host: host, outcome: .written)
        XCTAssertEqual(saved.action, "replace")
        XCTAssertEqual(saved.method, "dashboard replace -> /k/known_hosts")
        XCTAssertEqual(saved.outcome, "saved")
        XCTAssertEqual(saved.host, "web1")
        XCTAssertEqual(saved.endpoint, host.endpointLabel)
        XCTAssertEqual(saved.time, "2026-09-21T14:13:20.250Z")
        XCTAssertEqual(saved.oldEntries, ["kh:3: [10.0.0.1]:2201 ssh-ed25519 AAAA"])
        XCTAssertEqual(record(.decided(.pin, file: "p"), host: host, outcome: .refused("the pins changed")).outcome, "not saved: the pins changed")
    }

    func testSyncAndTidyAndConnectKeepTheirWords() {
        let synced = record(.synced(proof: "pinned CA", file: "/k/kh"), host: host, outcome: .written)
        XCTAssertEqual([synced.action, synced.method, synced.outcome], ["sync", "sync (pinned CA) -> /k/kh", "saved"])
        let tidied = record(.tidied(finding: "duplicate", file: "/k/kh"), host: nil, outcome: .refused("it was changed"))
        XCTAssertEqual([tidied.action, tidied.method, tidied.outcome, tidied.host, tidied.endpoint],
                       ["tidy", "tidy --fix duplicate -> /k/kh", "not removed: it was changed", "", ""])
        XCTAssertEqual(record(.tidied(finding: "duplicate", file: "f"), host: nil, outcome: .written).outcome, "removed")
        let relative = record(.tidied(finding: "duplicate", file: "kh"), host: nil, outcome: .written)
        XCTAssertEqual(relative.method, "tidy --fix duplicate -> " + FileManager.default.currentDirectoryPath + "/kh", "a relative file is logged absolute")
        let connected = record(.connected(command: ["ssh", "-p", "2201", "web1"]), host: host, outcome: .finished("ssh exited with status 0."))
        XCTAssertEqual([connected.action, connected.method, connected.outcome], ["connect", "ssh -p 2201 web1", "ssh exited with status 0."])
    }

    func testTheLogLineIsOneSortedKeyJSONObjectWithEveryField() throws {
        let dir = try StoreTestDirectory()
        defer { dir.remove() }
        let log = AuditLog(path: dir.file("state/audit.jsonl"))
        try log.append([AuditEvent(time: time, user: "alice", action: .synced(proof: "pin", file: "/k/kh"), host: host,
                                   names: ["[10.0.0.1]:2201"], newFingerprints: ["SHA256:new"], outcome: .written)])
        let line = dir.text("state/audit.jsonl")
        XCTAssertEqual(line, #"{"action":"sync","endpoint":"\#(host.endpointLabel)","host":"web1","method":"sync (pin) -> /k/kh","names":["[10.0.0.1]:2201"],"new_fingerprints":["SHA256:new"],"old_entries":[],"old_fingerprints":[],"outcome":"saved","time":"2026-09-21T14:13:20.250Z","user":"alice"}"#
                       + "\n")
    }
}
