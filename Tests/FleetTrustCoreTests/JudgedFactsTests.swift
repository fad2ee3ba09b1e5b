import XCTest
@testable import FleetTrustCore

/// The typed values and facts renderers read instead of deciding: fingerprints as 32-byte values,
/// the policy's identity, the judge's refusals as typed failures, the host's known_hosts answer
/// and what a replace writes.
final class JudgedFactsTests: XCTestCase {
    private let key = TestKeys.a

    func testAFingerprintParsesEverySpellingOfItsTextAndPrintsAsSshKeygenDoes() throws {
        let fingerprint = key.fingerprint
        XCTAssertEqual(fingerprint.description, key.sha256Fingerprint)
        XCTAssertEqual(fingerprint.description.count, 7 + 43)
        let body = String(fingerprint.description.dropFirst(7))
        for spelling in [fingerprint.description, body, body + "=", "SHA256:" + body + "="] {
            XCTAssertEqual(SHA256Fingerprint(spelling), fingerprint, spelling)
        }
        XCTAssertNil(SHA256Fingerprint(String(body.dropLast())), "42 characters are not 32 bytes")
        XCTAssertNil(SHA256Fingerprint("MD5:" + body))
        XCTAssertNotEqual(TestKeys.b.fingerprint, fingerprint)
        XCTAssertEqual(Set([fingerprint, try XCTUnwrap(SHA256Fingerprint(body))]).count, 1, "hashed as the bytes, not the text")
        XCTAssertEqual(SHA256Digest(fingerprint.digest.bytes), fingerprint.digest)
    }

    func testTheSameDigestReadsAsAnSPKIPinInPaddedBase64() throws {
        let pin = try XCTUnwrap(SPKIPin(Base64.encode(Digest.sha256(Array("key".utf8)))))
        XCTAssertTrue(pin.description.hasSuffix("="))
        XCTAssertEqual(SPKIPin(pin.description.dropLast()), pin, "the padding may be left out")
        XCTAssertNil(SPKIPin("AAAA"))
    }

    func testAPolicyIsKnownByItsIdentityNotByComparingItsName() {
        XCTAssertTrue(PolicyIdentity(named: "off").checksNothing)
        XCTAssertEqual(PolicyIdentity(named: "pin-only").builtIn, .pinOnly)
        XCTAssertEqual(PolicyIdentity(named: "mine"), .custom("mine"))
        XCTAssertNil(PolicyIdentity(named: "mine").builtIn)
        XCTAssertEqual(TrustPolicy.off.identity, .builtIn(.off))
        XCTAssertEqual(TrustPolicy(name: "mine") { $0.standard }.identity.description, "mine")
    }

    func testARefusalOfTheJudgeIsTypedAndReadsAsTheHostKeyStage() {
        let host = InventoryHost(name: "web")
        let result = ProbeResult(host: "web", port: 22, keys: [DiscoveredKey(key: key)], serverHostKeyAlgorithms: ["ssh-dss"])
        let judged = FleetJudge(knownHosts: KnownHosts(files: []), pins: nil).judge(host, result)
        XCTAssertEqual(judged.status, .error)
        XCTAssertEqual(judged.failure, .keyRefused(.noCommonAlgorithm(serverOffers: ["ssh-dss"])))
        XCTAssertEqual(judged.failure?.stage, .hostKey)
        XCTAssertEqual(judged.failure?.code, .noMatchingHostKeyType)
        XCTAssertEqual(judged.failure?.message.value, "ssh offers no host-key algorithm the server has (the server offers ssh-dss)")

        let failure = ProbeFailure(stage: .connect, code: .connectionRefused, message: "refused")
        let unreachable = FleetJudge(knownHosts: KnownHosts(files: []), pins: nil)
            .judge(host, ProbeResult(host: "web", port: 22, failures: [failure]))
        XCTAssertEqual(unreachable.failure, .probe(failure), "a probe failure stays the probe's")
    }

    func testTheKnownHostsAnswerIsTheLoudestAlarmOfAnyKeyElseTheAnswerForTheKeySshMeets() {
        let host = InventoryHost(name: "web")
        let result = ProbeResult(host: "web", port: 22, keys: [DiscoveredKey(key: TestKeys.a), DiscoveredKey(key: TestKeys.ecdsa)])
        func judged(_ knownHosts: String) -> JudgedHost {
            FleetJudge(knownHosts: KnownHosts(files: [TestKeys.file(knownHosts)]), pins: nil).judge(host, result)
        }
        XCTAssertEqual(judged("web \(TestKeys.a.openSSHLine)\n").knownHostsAnswer, .trusted)
        XCTAssertEqual(judged("").knownHostsAnswer, .new)
        let revoked = judged("web \(TestKeys.a.openSSHLine)\n@revoked * \(TestKeys.ecdsa.openSSHLine)\n")
        XCTAssertEqual(revoked.negotiatedKey?.verdict, .trusted, "ssh meets the ed25519 key")
        XCTAssertEqual(revoked.knownHostsAnswer, .revoked, "an alarm about another key wins")
        XCTAssertEqual(revoked.keys.map(\.isAlarm), [false, true])
        XCTAssertNil(revoked.replacement, "only a changed host is replaced")
    }

    func testAReplaceWritesTheUsableKeysAndSupersedesTheLinesRecordingOthers() throws {
        let host = InventoryHost(name: "web")
        let result = ProbeResult(host: "web", port: 22, keys: [DiscoveredKey(key: TestKeys.a)])
        let judged = FleetJudge(knownHosts: KnownHosts(files: [TestKeys.file("# one\nweb \(TestKeys.b.openSSHLine)\n")]), pins: nil)
            .judge(host, result)
        XCTAssertEqual(judged.status, .changed)
        let replacement = try XCTUnwrap(judged.replacement)
        XCTAssertEqual(replacement.keys, [TestKeys.a])
        XCTAssertEqual(replacement.superseded.map(\.location), [SourceLocation(file: "kh", line: 2)])
        XCTAssertEqual(replacement.superseded.map(\.fingerprint), [TestKeys.b.sha256Fingerprint])
        XCTAssertEqual(replacement.superseded.map(\.keyType), [.ed25519])
    }
}
