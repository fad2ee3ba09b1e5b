import XCTest
@testable import FleetTrustCore

/// Drift as the judge decides it from the history value, one rule per test.
final class DriftJudgementTests: XCTestCase {
    private func key(_ type: String, _ fingerprint: String) -> KeyIdentity { KeyIdentity(type: type, fingerprint: fingerprint) }

    /// A history of probes, each a list of keys, recorded in order.
    private func history(_ probes: [[KeyIdentity]], lastComplete: Bool = true) -> HostHistory {
        var keys: [KeyIdentity: KeyHistory] = [:]
        for (index, probe) in probes.enumerated() {
            for key in probe {
                var entry = keys[key] ?? KeyHistory(key: key, firstSeen: UInt64(index), lastSeen: 0, lastSighting: 0, sightings: 0)
                entry.lastSeen = UInt64(index)
                entry.lastSighting = Int64(index + 1)
                entry.sightings += 1
                keys[key] = entry
            }
        }
        return HostHistory(keys: Array(keys.values), latest: Set(probes.last ?? []), latestComplete: lastComplete)
    }

    private func drift(_ presented: [KeyIdentity], _ history: HostHistory?, offered: [String]? = nil, complete: Bool = true) -> HostDrift {
        HostDrift.judge(presented: presented, offered: offered, complete: complete, history: history, now: 100)
    }

    func testNoHistoryIsFirstScan() {
        XCTAssertEqual(drift([key("ssh-ed25519", "A")], nil).kind, .firstScan)
    }

    func testTheSameKeysAreNoDrift() {
        XCTAssertEqual(drift([key("ssh-ed25519", "A")], history([[key("ssh-ed25519", "A")]])).kind, DriftKind.none)
    }

    func testANewTypeIsAdded() {
        let result = drift([key("ssh-ed25519", "A"), key("ssh-rsa", "R")], history([[key("ssh-ed25519", "A")]]))
        XCTAssertEqual(result.kind, .added)
        XCTAssertEqual(result.seen(key("ssh-rsa", "R"))?.firstSeen, 100)
    }

    func testAnotherKeyOfATypeIsChanged() {
        let result = drift([key("ssh-ed25519", "B")], history([[key("ssh-ed25519", "A")]]))
        XCTAssertEqual(result.kind, .changed)
        XCTAssertEqual(result.moves.first?.before, "A")
    }

    func testAKeyBackAfterAnotherIsRevertedAndLouderThanAdded() {
        let past = history([[key("ssh-ed25519", "A")], [key("ssh-ed25519", "B")]])
        XCTAssertEqual(drift([key("ssh-ed25519", "A"), key("ssh-rsa", "R")], past).kind, .reverted)
    }

    func testATypeTheServerNoLongerOffersIsRemoved() {
        let past = history([[key("ssh-ed25519", "A"), key("ssh-rsa", "R")]])
        XCTAssertEqual(drift([key("ssh-ed25519", "A")], past, offered: ["ssh-ed25519"], complete: false).kind, .removed)
        XCTAssertEqual(drift([key("ssh-ed25519", "A")], past, offered: ["ssh-ed25519", "rsa-sha2-512"], complete: false).kind,
                       DriftKind.none, "still offered: the probe only failed to fetch it")
        XCTAssertEqual(drift([key("ssh-ed25519", "A")], past, complete: false).kind, DriftKind.none,
                       "a partial probe without the server's list proves no type gone")
        XCTAssertEqual(drift([key("ssh-ed25519", "A")], past, complete: true).kind, .removed)
    }

    func testTheJudgeCarriesDriftOnlyWithAHistory() throws {
        let hostKey = try HostKey(openSSHLine: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKNVpLh/jJtEMGuMZHkgFkq6jkXKETMhrjGpsVTvO2Dc")
        let host = InventoryHost(name: "web1", address: "127.0.0.1", port: 22)
        let probe = ProbeResult(host: "127.0.0.1", port: 22, keys: [DiscoveredKey(key: hostKey)])
        var judge = FleetJudge(knownHosts: KnownHosts(files: []), pins: nil)
        XCTAssertNil(judge.judge(host, probe).drift)
        judge.history = FleetHistory(hosts: [host.historyKey: history([[key("ssh-ed25519", "SHA256:other")]])])
        let judged = judge.judge(host, probe, now: 5)
        XCTAssertEqual(judged.drift?.kind, .changed)
        XCTAssertEqual(judged.status, .new, "drift never changes the status")
        XCTAssertEqual(ExitStatusRule.hosts([judged]), 1)
    }
}
