import Foundation
import XCTest
@testable import FleetTrustCore

final class TrustJudgeTests: XCTestCase {
    let a = TestKeys.a, b = TestKeys.b

    func testAnyOtherRecordedKeyOfAnyTypeMeansChanged() throws {
        XCTAssertEqual(try TestKeys.verdict("h \(TestKeys.ecdsa.openSSHLine)\n", a, host: "h"), .changed)
        XCTAssertEqual(try TestKeys.verdict("h \(TestKeys.ecdsa.openSSHLine)\nh \(a.openSSHLine)\n", a, host: "h"), .trusted)
        XCTAssertEqual(try TestKeys.verdict("@cert-authority h \(a.openSSHLine)\n", a, host: "h"), .new)
    }

    func testRevocationWinsAndAppliesOnlyWhenItsPatternMatches() throws {
        XCTAssertEqual(try TestKeys.verdict("h \(a.openSSHLine)\n@revoked * \(a.openSSHLine)\n", a, host: "h"), .revoked)
        XCTAssertEqual(try TestKeys.verdict("h \(a.openSSHLine)\n@revoked other \(a.openSSHLine)\n", a, host: "h"), .trusted)
        XCTAssertEqual(try TestKeys.verdict("@revoked h \(b.openSSHLine)\n", a, host: "h"), .new)
    }

    func testBareNameRetryAcceptsOnlyAMatchAndPortLineWins() throws {
        XCTAssertEqual(try TestKeys.verdict("h \(a.openSSHLine)\n", a, host: "h", port: 2222), .trusted)
        XCTAssertEqual(try TestKeys.verdict("h \(b.openSSHLine)\n", a, host: "h", port: 2222), .new)
        XCTAssertEqual(try TestKeys.verdict("h \(a.openSSHLine)\n@revoked h \(a.openSSHLine)\n", a, host: "h", port: 2222), .revoked,
                       "stricter than ssh, which says unknown here and would accept the key once saved under [h]:2222")
        XCTAssertEqual(try TestKeys.verdict("h \(a.openSSHLine)\n[h]:2222 \(b.openSSHLine)\n", a, host: "h", port: 2222), .changed)
        XCTAssertEqual(try TestKeys.verdict("[h]:22 \(a.openSSHLine)\n", a, host: "h", port: 22), .new)
        XCTAssertEqual(try TestKeys.verdict("h \(a.openSSHLine)\n", a, host: "x", port: 2222, alias: "h"), .trusted)
        XCTAssertEqual(try TestKeys.verdict("[h]:2222 \(a.openSSHLine)\n", a, host: "x", port: 2222, alias: "h"), .new)
    }

    func testCheckHostIPTurnsTrustIntoIPMismatchOnlyWhenTheAddressLineDiffers() throws {
        let text = "h \(a.openSSHLine)\n192.0.2.1 \(b.openSSHLine)\n"
        XCTAssertEqual(try TestKeys.verdict(text, a, host: "h", checkHostIP: "192.0.2.1"), .ipMismatch)
        XCTAssertEqual(try TestKeys.verdict(text, a, host: "h"), .trusted, "CheckHostIP is off unless asked for")
        XCTAssertEqual(try TestKeys.verdict(text, a, host: "h", checkHostIP: "192.0.2.2"), .trusted, "an unknown address only warns")
        XCTAssertEqual(try TestKeys.verdict("h \(b.openSSHLine)\n192.0.2.1 \(a.openSSHLine)\n", a, host: "h", checkHostIP: "192.0.2.1"), .changed)
        XCTAssertEqual(try TestKeys.verdict("192.0.2.1 \(a.openSSHLine)\n", a, host: "h", checkHostIP: "192.0.2.1"), .new, "address lines alone never trust")
        XCTAssertEqual(try TestKeys.verdict("h \(a.openSSHLine)\n@revoked 192.0.2.1 \(a.openSSHLine)\n", a, host: "h", checkHostIP: "192.0.2.1"), .trusted, "an address revocation is ignored")
        XCTAssertEqual(try TestKeys.verdict("h \(a.openSSHLine)\n127.0.0.1 \(b.openSSHLine)\n", a, host: "h", checkHostIP: "127.0.0.1"), .trusted, "loopback disables the check")
        XCTAssertEqual(try TestKeys.verdict("h \(a.openSSHLine)\n[192.0.2.1]:2222 \(b.openSSHLine)\n", a, host: "h", port: 2222, checkHostIP: "192.0.2.1"), .ipMismatch, "after the retry the port-suffixed address still counts")
    }

    func testEvidenceNamesFileLineAndHashedFlag() throws {
        let hashed = try HashedHostName(hashing: "h").field
        let judge = KnownHostsJudge(knownHosts: KnownHosts(files: [TestKeys.file("# c\n\(hashed) \(b.openSSHLine)\n", path: "/k")]))
        let judgement = judge.judge(a, for: ConnectionTarget(host: "h"))
        XCTAssertEqual(judgement.verdict, .changed)
        XCTAssertEqual(judgement.evidence, [TrustEvidence(role: .differentKey, path: "/k", line: 2, keyType: "ssh-ed25519",
                                                          fingerprint: b.sha256Fingerprint, hashed: true)])
        XCTAssertFalse(judgement.evidence[0].sentence.contains(" h "), "hashed names are never spelled out")
    }

    func testAdditionalLookupNamesAreAnExtensionConsultedOnlyWhenNothingIsKnown() throws {
        let judge = KnownHostsJudge(knownHosts: KnownHosts(files: [TestKeys.file("alias \(a.openSSHLine)\nh2 \(b.openSSHLine)\n")]))
        XCTAssertEqual(judge.judge(a, for: ConnectionTarget(host: "10.0.0.1")).verdict, .new)
        let viaAlias = judge.judge(a, for: ConnectionTarget(host: "10.0.0.1", additionalLookupNames: ["alias"]))
        XCTAssertEqual(viaAlias.verdict, .trusted)
        XCTAssertEqual(viaAlias.viaAdditionalName, "alias")
        XCTAssertEqual(judge.judge(b, for: ConnectionTarget(host: "h2", additionalLookupNames: ["alias"])).verdict, .trusted)
    }

    func testHostStatusUsesNegotiatedKeyButReportsChangedAndNotRecordedTypes() throws {
        func judged(_ keys: [HostKey], _ text: String) -> JudgedHost {
            FleetJudge(knownHosts: KnownHosts(files: [TestKeys.file(text)]), pins: nil)
                .judge(InventoryHost(name: "h"), ProbeResult(host: "h", port: 22, keys: keys.map { DiscoveredKey(key: $0) }))
        }
        let trusted = judged([a, TestKeys.ecdsa], "h \(TestKeys.ecdsa.openSSHLine)\n")
        XCTAssertEqual(trusted.negotiatedKey?.key, TestKeys.ecdsa, "ssh prefers the recorded type")
        XCTAssertEqual(trusted.status, .trusted, "the ed25519 key is not recorded, so it is not a change")
        XCTAssertEqual(trusted.keys.first { $0.key == a }?.verdict, .notRecorded)
        XCTAssertEqual(judged([a, TestKeys.ecdsa], "h \(TestKeys.ecdsa.openSSHLine)\nh \(b.openSSHLine)\n").status, .changed)
        XCTAssertEqual(judged([a, TestKeys.ecdsa], "h \(TestKeys.ecdsa.openSSHLine)\n@revoked * \(a.openSSHLine)\n").status, .revoked)
        XCTAssertEqual(judged([a], "").status, .new)
    }

    func testCertificateChecksFollowOpenSSH92() throws {
        // Certificates `ssh-keygen -s ca -I id ARGS host.pub` made, checked in (Fixtures/Judge/trust).
        func certificate(_ args: [String]) throws -> HostKey { try JudgeFixtures.certificate("trust", ["ca"] + args) }
        let caLine = try JudgeFixtures.line("trust", "ca")
        let plain = try JudgeFixtures.key("trust", "host")
        let text = "@cert-authority *.example \(caLine)"
        XCTAssertEqual(try TestKeys.verdict(text, try certificate(["-h", "-n", "web.example"]), host: "Web.Example"), .trustedByCA)
        XCTAssertEqual(try TestKeys.verdict(text, try certificate(["-h"]), host: "web.example"), .trustedByCA, "empty principals: any host in 9.2")
        XCTAssertEqual(try TestKeys.verdict(text, try certificate(["-h", "-n", "*.example"]), host: "web.example"), .new, "principals are exact in 9.2")
        XCTAssertEqual(try TestKeys.verdict(text, try certificate(["-h", "-n", "web.example", "-V", "20200101:20210101"]), host: "web.example"), .new)
        XCTAssertEqual(try TestKeys.verdict(text, try certificate(["-n", "web.example"]), host: "web.example"), .invalidCertificate,
                       "a user certificate is no host certificate (stricter than ssh, which ignores it)")
        XCTAssertEqual(try TestKeys.verdict(text + "web.example \(plain.openSSHLine)\n", try certificate(["-h", "-n", "other"]), host: "web.example"), .trusted, "a failed certificate is judged as its plain key")
        XCTAssertEqual(try TestKeys.verdict(text + "@revoked * \(caLine)", try certificate(["-h"]), host: "web.example"), .revoked, "revoking the CA revokes its certificates")
        var forged = try certificate(["-h"]).blob
        forged[forged.count - 5] ^= 1
        XCTAssertEqual(try TestKeys.verdict(text, try HostKey(type: "ssh-ed25519-cert-v01@openssh.com", blob: forged), host: "web.example"),
                       .invalidCertificate, "a forged certificate is refused, as ssh refuses it")
    }
}

final class TrustBatchTests: XCTestCase {
    func testBatchJudgementEqualsOneAtATime() throws {
        var text = ""
        for i in 0..<300 {
            let name = i % 3 == 0 ? "[h\(i).example]:2222" : "h\(i).example"
            let field = i % 2 == 0 ? try HashedHostName(hashing: name).field : name
            text += "\(field) \((i % 5 == 0 ? TestKeys.b : TestKeys.a).openSSHLine)\n"
        }
        text += "*.example,!h7.example \(TestKeys.c.openSSHLine)\n@revoked h9.example,[h9.example]:2222 \(TestKeys.a.openSSHLine)\n"
        let judge = KnownHostsJudge(knownHosts: KnownHosts(files: [TestKeys.file(text)]))
        let batch = (0..<320).flatMap { i in
            [(key: TestKeys.a, target: ConnectionTarget(host: "H\(i).example", port: i % 2 == 0 ? 22 : 2222)),
             (key: TestKeys.c, target: ConnectionTarget(host: "h\(i).example", port: 22, checkHostIPAddress: "192.0.2.\(i % 250)"))]
        }
        let together = judge.judge(batch: batch, now: 1_800_000_000)
        for (item, result) in zip(batch, together) {
            XCTAssertEqual(result, judge.judge(item.key, for: item.target, now: 1_800_000_000), "\(item.target)")
        }
        XCTAssertEqual(Set(together.map(\.verdict)), [.trusted, .changed, .new, .revoked])
    }
}
