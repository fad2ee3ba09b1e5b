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
