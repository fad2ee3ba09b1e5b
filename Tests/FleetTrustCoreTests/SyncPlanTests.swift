import XCTest
@testable import FleetTrustCore

/// What `sync` does with each judged host, decided from the judgement alone.
final class SyncPlanTests: XCTestCase {
    private let host = InventoryHost(name: "web1", address: "10.0.0.5")

    private func judged(knownHosts: String, pins: String? = nil, keys: [HostKey] = [TestKeys.a]) throws -> JudgedHost {
        let pinSet = try pins.map { try PinSet.parse(path: "pins", bytes: Array($0.utf8)) }
        let judge = FleetJudge(knownHosts: KnownHosts(files: [TestKeys.file(knownHosts)]), pins: pinSet)
        return judge.judge(host, ProbeResult(host: "10.0.0.5", port: 22, keys: keys.map { DiscoveredKey(key: $0) }))
    }

    func testAPinnedNewHostIsAddedProvedByItsPin() throws {
        let host = try judged(knownHosts: "", pins: "web1 \(TestKeys.a.sha256Fingerprint)\n")
        XCTAssertEqual(SyncPlan.action(for: host, trustOnFirstUse: false), .add(keys: [TestKeys.a], recorded: [], proof: .pin, withheld: []))
    }

    /// A pin proves the keys it names, nothing else: a key of a type no pin covers is not saved
    /// "proved by pin", and a key no pin names while a pin names a key not presented is an alarm.
    func testOnlyTheKeysAPinNamesAreSavedProvedByIt() throws {
        let pinned = "web1 \(TestKeys.a.sha256Fingerprint)\n"
        let uncovered = try judged(knownHosts: "", pins: pinned, keys: [TestKeys.a, TestKeys.ecdsa])
        XCTAssertEqual(SyncPlan.action(for: uncovered, trustOnFirstUse: false),
                       .add(keys: [TestKeys.a], recorded: [], proof: .pin, withheld: [TestKeys.ecdsa]))
        // ssh meets the pinned Ed25519 key: first use adds nothing a pin does not prove.
        XCTAssertEqual(SyncPlan.action(for: uncovered, trustOnFirstUse: true),
                       .add(keys: [TestKeys.a], recorded: [], proof: .pin, withheld: [TestKeys.ecdsa]))
        let split = try judged(knownHosts: "", pins: "web1 \(TestKeys.a.sha256Fingerprint) \(TestKeys.ecdsa.sha256Fingerprint)\n",
                               keys: [TestKeys.a, TestKeys.c])
        XCTAssertEqual(split.status, .pinMismatch)
        XCTAssertEqual(SyncPlan.action(for: split, trustOnFirstUse: true), .refused)
        XCTAssertEqual(SyncPlan([split], trustOnFirstUse: true).exitStatus(failedWrites: 0), 2)
    }

    func testAnUnpinnedNewHostIsLeftAloneUnlessTrustOnFirstUse() throws {
        let host = try judged(knownHosts: "")
        guard case .notAdded(let why) = SyncPlan.action(for: host, trustOnFirstUse: false) else { return XCTFail() }
        XCTAssertTrue(why.contains("no pin proves its keys"), why)
        XCTAssertEqual(SyncPlan.action(for: host, trustOnFirstUse: true),
                       .add(keys: [TestKeys.a], recorded: [], proof: .trustOnFirstUse, withheld: []))
        XCTAssertEqual(SyncPlan([host], trustOnFirstUse: false).exitStatus(failedWrites: 0), 1)
    }

    /// Each key type is proved over its own connection, and nothing proves they reached one
    /// machine: first use saves only the key ssh meets (Ed25519 before ECDSA), as accept-new does.
    func testTrustOnFirstUseSavesOnlyTheKeySSHMeetsAndWithholdsTheOthers() throws {
        let host = try judged(knownHosts: "", keys: [TestKeys.ecdsa, TestKeys.a])
        XCTAssertEqual(SyncPlan.action(for: host, trustOnFirstUse: true),
                       .add(keys: [TestKeys.a], recorded: [], proof: .trustOnFirstUse, withheld: [TestKeys.ecdsa]))
        let pinnedECDSA = try judged(knownHosts: "", pins: "web1 \(TestKeys.ecdsa.sha256Fingerprint)\n", keys: [TestKeys.ecdsa, TestKeys.a])
        XCTAssertEqual(SyncPlan.action(for: pinnedECDSA, trustOnFirstUse: true),
                       .add(keys: [TestKeys.ecdsa, TestKeys.a], recorded: [], proof: .trustOnFirstUse, withheld: []))
        let note = try XCTUnwrap(FirstUseKeys.note([TestKeys.ecdsa], firstUse: true))
        XCTAssertTrue(note.contains(TestKeys.ecdsa.sha256Fingerprint) && note.contains("pin them"), note)
    }

    func testAChangedOrRevokedHostIsNeverTouchedAndIsAnAlarm() throws {
        let changed = try judged(knownHosts: "10.0.0.5 \(TestKeys.b.openSSHLine)\n")
        let revoked = try judged(knownHosts: "@revoked * \(TestKeys.a.openSSHLine)\n")
        for host in [changed, revoked] {
            XCTAssertEqual(SyncPlan.action(for: host, trustOnFirstUse: true), .refused, "\(host.status)")
        }
        XCTAssertEqual(SyncPlan([changed, revoked], trustOnFirstUse: true).exitStatus(failedWrites: 0), 2)
    }

    func testATrustedHostIsLeftAsItIsAndAFailedWriteRaisesTheStatus() throws {
        let trusted = try judged(knownHosts: "10.0.0.5 \(TestKeys.a.openSSHLine)\n")
        XCTAssertEqual(SyncPlan.action(for: trusted, trustOnFirstUse: true), .alreadyTrusted)
        XCTAssertEqual(SyncPlan([trusted], trustOnFirstUse: true).exitStatus(failedWrites: 0), 0)
        XCTAssertEqual(SyncPlan([trusted], trustOnFirstUse: true).exitStatus(failedWrites: 1), 1)
    }
}
