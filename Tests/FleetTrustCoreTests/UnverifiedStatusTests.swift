import Foundation
import XCTest
@testable import FleetTrustCore

/// Never quieter than `ssh` by construction: a host known_hosts records keys for, whose probe did
/// not prove the key `ssh` would meet after the server answered, is `unverified` (exit 2) and
/// names what could not be done; only the failures `ssh` shares keep their status. Checked-in keys
/// (Fixtures/Judge/precedence), judged by the one judge.
final class UnverifiedStatusTests: XCTestCase {
    private var ed: HostKey!
    private var ec: HostKey!
    private var ca: HostKey!

    override func setUpWithError() throws {
        ed = try JudgeFixtures.key("precedence", "ed")
        ec = try JudgeFixtures.key("precedence", "ec")
        ca = try JudgeFixtures.key("precedence", "ca")
    }

    private func judge(_ knownHosts: String, _ probe: ProbeResult, host: InventoryHost = InventoryHost(name: "web"),
                       policies: PolicyResolver = PolicyResolver()) -> JudgedHost {
        let files = KnownHosts(files: [TestKeys.file(knownHosts, path: "/home/u/.ssh/known_hosts")])
        return FleetJudge(knownHosts: files, pins: nil, policies: policies).judge(host, probe, now: JudgeFixtures.now)
    }

    private func failed(_ stage: ProbeStage, _ code: FailureCode, serverAlgorithms: [String]? = nil, port: Int = 22) -> ProbeResult {
        ProbeResult(host: "web", port: port, failures: [ProbeFailure(stage: stage, code: code, message: "what the probe saw")],
                    serverHostKeyAlgorithms: serverAlgorithms)
    }

    func testAKeyExchangeFailureAgainstARecordedKeyIsUnverifiedAndNamesWhatFailed() {
        let judged = judge("web \(ec.openSSHLine)\n", failed(.keyExchange, .kexFailed))
        XCTAssertEqual(judged.status, .unverified)
        XCTAssertEqual(judged.status.alarmLevel, 2)
        XCTAssertEqual(ExitStatusRule.hosts([judged]), 2)
        XCTAssertEqual(judged.failure?.stage, .keyExchange)
        XCTAssertEqual(judged.failure?.code, .kexFailed)
        XCTAssertEqual(judged.reason, .keyNotProved(comparedWith: SourceLocation(file: "/home/u/.ssh/known_hosts", line: 1)))
        let words = JudgementWords.reason(judged)
        XCTAssertTrue(words.contains("/home/u/.ssh/known_hosts:1") && words.contains("key-exchange kex-failed: what the probe saw"), words)
        XCTAssertEqual(judged.saving, .refused(.unverified))
    }

    func testEveryFailureOnceConnectedIsUnverified() {
        let answered: [(ProbeStage, FailureCode)] = [
            (.banner, .notSSH), (.banner, .bannerTimeout), (.banner, .connectionClosed), (.keyExchange, .kexFailed), (.keyExchange, .kexTimeout), (.keyExchange, .badSignature),
            (.keyExchange, .connectionClosed), (.keyExchange, .other), (.keyExchange, .noCommonAlgorithm),
        ]
        for (stage, code) in answered {
            XCTAssertEqual(judge("web \(ed.openSSHLine)\n", failed(stage, code)).status, .unverified, "\(stage) \(code)")
        }
    }

    func testFailuresSSHSharesKeepTheirStatus() {
        let shared: [(ProbeStage, FailureCode, HostStatus)] = [
            (.resolve, .resolveFailed, .unreachable), (.connect, .connectionRefused, .unreachable),
            (.connect, .connectTimeout, .unreachable), (.proxy, .hopUnreachable, .unreachable),
            (.proxy, .bastionAuthFailed, .error), (.cancelled, .cancelled, .error),
        ]
        for (stage, code, status) in shared {
            XCTAssertEqual(judge("web \(ed.openSSHLine)\n", failed(stage, code)).status, status, "\(stage) \(code)")
        }
    }

    func testNoCommonAlgorithmStaysAnErrorOnlyWhenTheServersHostKeyListSharesNothingWithSSHs() {
        XCTAssertEqual(judge("web \(ed.openSSHLine)\n", failed(.keyExchange, .noCommonAlgorithm, serverAlgorithms: ["ssh-dss"])).status, .error)
        XCTAssertEqual(judge("web \(ed.openSSHLine)\n", failed(.keyExchange, .noCommonAlgorithm, serverAlgorithms: ["ssh-ed25519"])).status,
                       .unverified, "a key-exchange algorithm our client lacks may be one ssh has")
        XCTAssertEqual(judge("web \(ed.openSSHLine)\n", failed(.keyExchange, .noCommonAlgorithm)).status, .unverified)
        XCTAssertEqual(judge("web \(ed.openSSHLine)\n", failed(.keyExchange, .noCommonAlgorithm,
                                                              serverAlgorithms: ["sk-ssh-ed25519@openssh.com"])).status,
                       .unverified, "ssh offers security-key host keys, which our client cannot verify")
    }

    func testANewHostWithNothingRecordedKeepsTodaysStatus() {
        XCTAssertEqual(judge("other \(ed.openSSHLine)\n", failed(.keyExchange, .kexFailed)).status, .error)
        XCTAssertEqual(judge("", failed(.banner, .notSSH)).status, .error)
        XCTAssertEqual(judge("", failed(.connect, .connectionRefused)).status, .unreachable)
    }

    func testCertificateAuthorityAndRevokedLinesAreRecordedKeysToo() {
        XCTAssertEqual(judge("@cert-authority web \(ca.openSSHLine)\n", failed(.keyExchange, .kexFailed)).status, .unverified)
        XCTAssertEqual(judge("@cert-authority *.example \(ca.openSSHLine)\n@revoked web \(ec.openSSHLine)\n",
                             failed(.keyExchange, .badSignature)).status, .unverified)
    }

    func testTheBareNameSSHRetriesForAnotherPortCounts() {
        let host = InventoryHost(name: "web", port: 2222)
        XCTAssertEqual(judge("web \(ed.openSSHLine)\n", failed(.keyExchange, .kexFailed, port: 2222), host: host).status, .unverified)
        XCTAssertEqual(judge("[web]:2200 \(ed.openSSHLine)\n", failed(.keyExchange, .kexFailed, port: 2222), host: host).status, .error)
    }

    func testTheKeySSHWouldMeetNotProvedIsUnverifiedNotAnError() {
        // ssh prefers the recorded ECDSA type; the probe proved only the Ed25519 key.
        let probe = ProbeResult(host: "web", port: 22, keys: [DiscoveredKey(key: ed)],
                                serverHostKeyAlgorithms: ["ecdsa-sha2-nistp256", "ssh-ed25519"])
        let judged = judge("web \(ec.openSSHLine)\n", probe)
        XCTAssertEqual(judged.status, .unverified)
        XCTAssertEqual(judged.failure?.code, .negotiatedKeyNotProbed)
        XCTAssertEqual(judge("other \(ec.openSSHLine)\n", probe).status, .new, "nothing recorded: ssh meets the Ed25519 key")
    }

    func testAFailedAttemptIsUnverifiedWhenWhichKeySSHMeetsWasOnlyInferred() {
        let inferred = ProbeResult(host: "web", port: 22, keys: [DiscoveredKey(key: ed)],
                                   failures: [ProbeFailure(stage: .keyExchange, code: .kexFailed, message: "ecdsa attempt failed")])
        XCTAssertEqual(judge("web \(ed.openSSHLine)\n", inferred).status, .unverified)
        var known = inferred
        known.gatherSSH { $0.serverHostKeyAlgorithms = ["ssh-ed25519", "ecdsa-sha2-nistp256"] }
        XCTAssertEqual(judge("web \(ed.openSSHLine)\n", known).status, .trusted, "the server's list says ssh meets the proved key")
    }

    func testAChangedKeyStaysChanged() {
        let probe = ProbeResult(host: "web", port: 22, keys: [DiscoveredKey(key: ed)],
                                failures: [ProbeFailure(stage: .keyExchange, code: .kexFailed, message: "x")])
        XCTAssertEqual(judge("web \(try! JudgeFixtures.key("precedence", "unrelated").openSSHLine)\n", probe).status, .changed)
    }

    func testNoPolicyQuietensAProbeThatProvedNothing() throws {
        let policies = try PolicyResolver(file: PolicyFile.parse(path: "policies", bytes: Array("web off\n".utf8)))
        XCTAssertEqual(judge("web \(ed.openSSHLine)\n", failed(.keyExchange, .kexFailed), policies: policies).status, .unverified)
    }
    /// The connection shaped like `ssh`'s decides: its failure once the server answered leaves the
    /// key `ssh` meets unproved whatever the other connections proved, and its key is the one judged.
    func testTheSSHShapedConnectionDecidesWhichKeySSHMeets() {
        var probe = ProbeResult(host: "web", port: 22, keys: [DiscoveredKey(key: ed)],
                                serverHostKeyAlgorithms: ["ssh-ed25519", "ecdsa-sha2-nistp256"])
        XCTAssertEqual(judge("web \(ed.openSSHLine)\n", probe).status, .trusted, "no such connection: inferred, as before")
        probe.sshConnection = .proved(Self.met(ed, "ssh-ed25519"))
        XCTAssertEqual(judge("web \(ed.openSSHLine)\n", probe).status, .trusted)
        probe.sshConnection = .failed(ProbeFailure(stage: .keyExchange, code: .kexFailed, message: "what ssh's connection saw"))
        let judged = judge("web \(ed.openSSHLine)\n", probe)
        XCTAssertEqual(judged.status, .unverified)
        XCTAssertEqual(judged.failure?.code, .kexFailed)
        probe.sshConnection = .failed(ProbeFailure(stage: .connect, code: .connectionRefused, message: "refused"))
        XCTAssertEqual(judge("web \(ed.openSSHLine)\n", probe).status, .trusted, "a failure ssh shares is no gap")
    }

    /// A relay showed the other connections the recorded ECDSA key and `ssh`'s connection another
    /// one: that one is the key judged as met, and `ssh` says CHANGED.
    func testAnotherKeyMetBySSHsConnectionIsChangedWhateverTheOthersProved() throws {
        let other = try JudgeFixtures.key("precedence", "otherEC")
        var probe = ProbeResult(host: "web", port: 22, keys: [DiscoveredKey(key: ec), DiscoveredKey(key: other)],
                                serverHostKeyAlgorithms: ["ecdsa-sha2-nistp256"])
        probe.sshConnection = .proved(Self.met(other, "ecdsa-sha2-nistp256"))
        let judged = judge("web \(ec.openSSHLine)\n", probe)
        XCTAssertEqual(judged.status, .changed)
        XCTAssertEqual(judged.keys.firstIndex(where: \.isNegotiated), 1, "the key ssh's connection proved is the one ssh meets")
        // Proved under another algorithm than ssh's order for the host gives (a probe made without
        // the known_hosts order): the inference from the server's list stands.
        probe.sshConnection = .proved(Self.met(other, "ecdsa-sha2-nistp384"))
        XCTAssertEqual(judge("web \(ec.openSSHLine)\n", probe).keys.firstIndex(where: \.isNegotiated), 0)
    }

    private static func met(_ key: HostKey, _ algorithm: String) -> DiscoveredKey {
        DiscoveredKey(key: key, algorithms: NegotiatedAlgorithms(hostKey: algorithm, keyExchange: "sntrup761x25519-sha512",
                                                                 cipher: "chacha20-poly1305@openssh.com", mac: "<implicit>"))
    }
}
