import Foundation
import XCTest
@testable import FleetTrustCore

final class PolicyTests: XCTestCase {
    let target = ConnectionTarget(host: "web", port: 2222)

    func testRequirePoliciesAcceptOnlyTheirKeys() throws {
        XCTAssertTrue(try TrustPolicy.requireKey(TestKeys.a).evaluate(TestKeys.a, for: target).accepted)
        XCTAssertFalse(try TrustPolicy.requireKey(TestKeys.a).evaluate(TestKeys.b, for: target).accepted)
        let any = try TrustPolicy.requireAnyOf([TestKeys.a, TestKeys.b]).evaluate(TestKeys.b, for: target)
        XCTAssertEqual(any.method, .requiredKey)
        XCTAssertEqual(try TrustPolicy.acceptAnyVerifiedKeyUnsafe.evaluate(TestKeys.c, for: target).method, .unsafeAnyVerifiedKey)
    }

    func testKnownHostsPolicyRecordsTheMethodAndHonoursAdditionalNames() throws {
        let known = KnownHosts(files: [TestKeys.file("web \(TestKeys.a.openSSHLine)\nalias \(TestKeys.b.openSSHLine)\n")])
        let decision = try TrustPolicy.knownHosts(known).evaluate(TestKeys.a, for: target)
        XCTAssertEqual(decision.method, .knownHosts)
        XCTAssertEqual(decision.judgement?.viaBareNameRetry, true)
        XCTAssertFalse(try TrustPolicy.knownHosts(known).evaluate(TestKeys.b, for: ConnectionTarget(host: "db")).accepted)
        XCTAssertTrue(try TrustPolicy.knownHosts(known, additionalLookupNames: ["alias"]).evaluate(TestKeys.b, for: ConnectionTarget(host: "db")).accepted)
    }

    func testTrustOnFirstUseStoresThenRejectsOrReplacesAChangedKey() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ft-tofu-\(getpid())/known_hosts").path
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = KnownHostsTrustStore(path: path, hashNames: false)
        let rejecting = TrustPolicy.trustOnFirstUse(store: store)
        XCTAssertEqual(try rejecting.evaluate(TestKeys.a, for: target).method, .firstUse)
        XCTAssertEqual(try rejecting.evaluate(TestKeys.a, for: target).method, .storedKey)
        XCTAssertFalse(try rejecting.evaluate(TestKeys.b, for: target).accepted)
        let replacing = TrustPolicy.trustOnFirstUse(store: store) { changed in
            changed.stored == [TestKeys.a] ? .replace : .reject
        }
        XCTAssertEqual(try replacing.evaluate(TestKeys.b, for: target).method, .replacedChangedKey)
        XCTAssertEqual(String(decoding: FileManager.default.contents(atPath: path)!, as: UTF8.self), "[web]:2222 \(TestKeys.b.openSSHLine)\n")
        XCTAssertThrowsError(try store.store(TestKeys.c, for: target, expectedStoredKey: TestKeys.a), "compare-and-set refuses a stale expectation")
    }

    func testCustomPolicyDecides() throws {
        let policy = TrustPolicy { key, _ in
            TrustDecision(accepted: key == TestKeys.c, method: key == TestKeys.c ? .custom : nil, reason: "test")
        }
        XCTAssertEqual(try policy.evaluate(TestKeys.c, for: target).method, .custom)
        XCTAssertFalse(try policy.evaluate(TestKeys.a, for: target).accepted)
    }
}

final class TrustProbeAssessmentTests: XCTestCase {
    func testProbeWithoutKeysIsUnreachableOrErrorByStage() throws {
        let known = KnownHosts(files: [TestKeys.file("[web]:2222 \(TestKeys.a.openSSHLine)\n")])
        let refused = ProbeResult(host: "web", port: 2222, failures: [ProbeFailure(stage: .connect, code: .connectionRefused, message: "refused")])
        let judge = FleetJudge(knownHosts: known, pins: nil)
        let host = InventoryHost(name: "WEB", port: 2222)
        XCTAssertEqual(judge.judge(host, refused).status, .unreachable)
        let kex = ProbeResult(host: "web", port: 2222, failures: [ProbeFailure(stage: .keyExchange, code: .kexFailed, message: "no")])
        XCTAssertEqual(judge.judge(host, kex).status, .error)
        let ok = ProbeResult(host: "WEB", port: 2222, keys: [DiscoveredKey(key: TestKeys.a)])
        XCTAssertEqual(judge.judge(host, ok).status, .trusted)
    }

    func testHashedNamesAreWrittenLowercasedSoSSHFindsThem() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ft-lower-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try KnownHostsWriter(path: path, hashNames: true).add(TestKeys.a, for: ["[Web.Example]:2222"])
        let text = String(decoding: FileManager.default.contents(atPath: path)!, as: UTF8.self)
        XCTAssertEqual(try TestKeys.verdict(text, TestKeys.a, host: "web.example", port: 2222), .trusted)
    }
}
