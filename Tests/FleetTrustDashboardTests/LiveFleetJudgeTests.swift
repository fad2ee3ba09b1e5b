import FleetTrustCore
@testable import FleetTrustDashboard
import Foundation
import XCTest

final class LiveFleetJudgeTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "live-judge-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func judge(_ path: String, hosts: [InventoryHost]) -> LiveFleetJudge {
        LiveFleetJudge(watching: [path], hosts: hosts) {
            FleetJudge(knownHosts: try KnownHosts.read(paths: [path]), pins: nil)
        }
    }

    func testASavedEntryIsSeenOnTheNextJudgementWithItsFileAndLine() throws {
        let path = directory + "/known_hosts"
        let host = InventoryHost(name: "web", address: "10.0.0.1", port: 2222)
        let live = judge(path, hosts: [host])
        let before = try XCTUnwrap(live.record(0, Fixtures.result(host, keys: [Fixtures.ed25519])).first?.judged)
        XCTAssertEqual(before.status, .new)
        XCTAssertEqual(before.saveNames, ["[10.0.0.1]:2222"])
        XCTAssertEqual(before.recorded, [])

        try "# comment\n[10.0.0.1]:2222 \(Fixtures.ed25519.openSSHLine)\n".write(toFile: path, atomically: true, encoding: .utf8)
        let after = try XCTUnwrap(live.rejudge(0))
        XCTAssertEqual(after.status, .trusted)
        XCTAssertEqual(after.trustedBy, [.knownHosts])
        XCTAssertEqual(after.recorded.map(\.location), [SourceLocation(file: path, line: 2)])
        XCTAssertEqual(after.recorded.first?.fingerprint, Fixtures.ed25519Fingerprint)
    }

    /// Two rows at one endpoint (one known_hosts name) whose probes met different servers: when
    /// the second lands, both are judged again as a split view, and neither offers a key to save.
    func testASecondRowUnderTheSameKnownHostsNameWithAnotherKeyMakesBothASplitView() throws {
        let path = directory + "/known_hosts"
        let web1 = InventoryHost(name: "web1", address: "10.0.0.1", port: 2222)
        let web1b = InventoryHost(name: "web1b", address: "10.0.0.1", port: 2222)
        let live = judge(path, hosts: [web1, web1b])
        XCTAssertEqual(live.record(0, Fixtures.result(web1, keys: [Fixtures.ed25519])).map(\.judged.status), [.new])
        let second = live.record(1, Fixtures.result(web1b, keys: [Fixtures.otherEd25519]))
        XCTAssertEqual(Set(second.map(\.index)), [0, 1], "the sibling is judged again")
        for (_, judged) in second {
            XCTAssertEqual(judged.status, .splitView)
            XCTAssertEqual(judged.saving, .refused(.splitView))
            XCTAssertEqual(judged.splitView.count, 1)
        }
        XCTAssertEqual(live.record(1, Fixtures.result(web1b, keys: [Fixtures.ed25519])).map(\.judged.status), [.new, .new],
                       "the same key again: no split view")
    }

    func testAChangedKeyCarriesTheRecordedLineAndARevokedOneCannotBeTrusted() throws {
        let path = directory + "/known_hosts"
        let host = InventoryHost(name: "web", address: "10.0.0.1")
        try "10.0.0.1 \(Fixtures.otherEd25519.openSSHLine)\n@revoked * \(Fixtures.ecdsa.openSSHLine)\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        let changed = try XCTUnwrap(judge(path, hosts: [host]).record(0, Fixtures.result(host, keys: [Fixtures.ed25519])).first?.judged)
        XCTAssertEqual(changed.status, .changed)
        XCTAssertEqual(changed.keys.first?.recordedInstead.map(\.location), [SourceLocation(file: path, line: 1)])
        XCTAssertEqual(changed.keys.first?.recordedInstead.first?.text.value, "10.0.0.1 " + Fixtures.otherEd25519.openSSHLine)
        XCTAssertEqual(changed.saving, .replace)

        let revoked = try XCTUnwrap(judge(path, hosts: [host]).record(0, Fixtures.result(host, keys: [Fixtures.ecdsa])).first?.judged)
        XCTAssertEqual(revoked.status, .revoked)
        XCTAssertEqual(revoked.saving, .refused(.revoked))
        XCTAssertEqual(revoked.keys.first?.judgement?.evidence.first?.line, 2)
    }

    func testAHostWithoutKeysIsUnreachableOrAnErrorByItsFailureStage() {
        let host = InventoryHost(name: "web")
        let refused = ProbeResult(host: "web", port: 22, failures: [ProbeFailure(stage: .connect, code: .connectionRefused, message: "refused")])
        XCTAssertEqual(judge(directory + "/none", hosts: [host]).record(0, refused).first?.judged.status, .unreachable)
        let kex = ProbeResult(host: "web", port: 22, failures: [ProbeFailure(stage: .keyExchange, code: .kexFailed, message: "no")])
        XCTAssertEqual(judge(directory + "/none", hosts: [host]).record(0, kex).first?.judged.status, .error)
    }

    func testHostsPresentingTheSameKeyCountEachOtherAsTheyArrive() throws {
        let hosts = [InventoryHost(name: "a", address: "10.0.0.1"), InventoryHost(name: "b", address: "10.0.0.2"),
                     InventoryHost(name: "c", address: "10.0.0.3")]
        let live = judge(directory + "/none", hosts: hosts)
        XCTAssertEqual(live.record(0, Fixtures.result(hosts[0], keys: [Fixtures.ed25519])).map(\.index), [0])
        XCTAssertEqual(live.record(2, Fixtures.result(hosts[2], keys: [Fixtures.otherEd25519])).map(\.index), [2])
        let third = live.record(1, Fixtures.result(hosts[1], keys: [Fixtures.ed25519, Fixtures.ecdsa]))
        XCTAssertEqual(third.map(\.index), [1, 0], "the earlier host sharing the key is judged again")
        let shared = [SharedKeys.plainKey(of: Fixtures.ed25519).sha256Fingerprint: 2]
        XCTAssertEqual(third[0].judged.keySharing.hostsByFingerprint, shared)
        XCTAssertEqual(third[1].judged.keySharing.hostsByFingerprint, shared)
        XCTAssertEqual(live.rejudge(2)?.keySharing, KeySharing())
        let rekeyed = live.record(1, Fixtures.result(hosts[1], keys: [Fixtures.ecdsa]))
        XCTAssertEqual(rekeyed.first?.judged.keySharing, KeySharing(), "a host that no longer shares the key loses the count")
        XCTAssertEqual(live.rejudge(0)?.keySharing, KeySharing())
    }
}
