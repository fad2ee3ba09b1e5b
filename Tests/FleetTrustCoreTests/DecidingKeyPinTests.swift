import Foundation
import XCTest
@testable import FleetTrustCore

/// Pins and policies judge the key `ssh` meets, the one the probe's connection shaped like
/// `ssh`'s proved: a relay that shows that connection a rogue key and the other connections the
/// pinned ones gets a mismatch, never a pin match (checked-in keys and certificates).
final class DecidingKeyPinTests: XCTestCase {
    private var host: HostKey!
    private var other: HostKey!
    private var ecdsa: HostKey!
    private var caA: HostKey!

    override func setUpWithError() throws {
        host = try JudgeFixtures.key("policy", "host")
        other = try JudgeFixtures.key("policy", "other")
        caA = try JudgeFixtures.key("policy", "caA")
        ecdsa = try JudgeFixtures.key("precedence", "ec")
    }

    /// The probe of a host whose deciding connection met `met` (under `algorithm`), the others the rest of `keys`.
    private func probe(_ keys: [HostKey], met: HostKey, _ algorithm: String, server: [String]) -> ProbeResult {
        var result = ProbeResult(host: "web", port: 22, keys: keys.map { DiscoveredKey(key: $0) }, serverHostKeyAlgorithms: server)
        result.sshConnection = .proved(DiscoveredKey(key: met, algorithms: NegotiatedAlgorithms(
            hostKey: algorithm, keyExchange: "sntrup761x25519-sha512", cipher: "chacha20-poly1305@openssh.com", mac: "<implicit>")))
        return result
    }

    private func judged(_ result: ProbeResult, known: String = "", pins: String, policy: String = "standard") throws -> JudgedHost {
        var inventoryHost = InventoryHost(name: "web", address: "web")
        inventoryHost.policy = policy
        return FleetJudge(knownHosts: KnownHosts(files: [TestKeys.file(known)]), pins: try PinSet.parse(path: "pins", bytes: Array(pins.utf8)))
            .judge(inventoryHost, result, now: JudgeFixtures.now)
    }

    func testAPinnedKeyShownOnlyToTheOtherConnectionsIsAMismatchUnderEveryPinPolicy() throws {
        let relayed = probe([host, other], met: other, "ssh-ed25519", server: ["ssh-ed25519"])
        let pins = "web \(host.sha256Fingerprint)\n"
        for policy in ["standard", "pinned", "pin-only"] {
            let judged = try judged(relayed, pins: pins, policy: policy)
            XCTAssertEqual(judged.status, .pinMismatch, policy)
            XCTAssertEqual(judged.saving, .refused(.pinMismatch), policy)
            let reason = JudgementWords.reason(judged)
            XCTAssertTrue(reason.hasPrefix("ssh meets ED25519 \(other.sha256Fingerprint), which no pin names"), reason)
            XCTAssertFalse(reason.contains("matches no presented key"), reason)
        }
        let honest = probe([host], met: host, "ssh-ed25519", server: ["ssh-ed25519"])
        XCTAssertEqual(try judged(honest, pins: pins, policy: "pin-only").status, .trusted, "the pinned key met by ssh's connection")
    }

    func testPinOnlyTrustsOnlyWhenAPinVouchesForTheKeySSHMeets() throws {
        // known_hosts records an ECDSA key, so ssh offers ECDSA first and meets it; the pin names only the Ed25519 key.
        let result = probe([host, ecdsa], met: ecdsa, "ecdsa-sha2-nistp256", server: ["ssh-ed25519", "ecdsa-sha2-nistp256"])
        let judged = try judged(result, known: "web \(ecdsa.openSSHLine)\n", pins: "web \(host.sha256Fingerprint)\n", policy: "pin-only")
        XCTAssertEqual(judged.status, .unpinned)
        XCTAssertTrue(judged.keys.first(where: \.isNegotiated)?.key == ecdsa)
    }

    func testTheCAPolicyNeedsTheCertificateToBeWhatSSHMeets() throws {
        let certificate = try JudgeFixtures.certificate("policy", ["caA", "-h", "-n", "web"])
        let pins = "web ca:\(caA.sha256Fingerprint)\n"
        let shownToOthers = probe([certificate, other], met: other, "ssh-ed25519", server: ["ssh-ed25519"])
        XCTAssertEqual(try judged(shownToOthers, pins: pins, policy: "ca").status, .pinMismatch)
        let shownToSSH = probe([certificate, host], met: certificate, "ssh-ed25519-cert-v01@openssh.com",
                               server: ["ssh-ed25519-cert-v01@openssh.com", "ssh-ed25519"])
        XCTAssertEqual(try judged(shownToSSH, pins: pins, policy: "ca").status, .trusted)
    }

    /// The document records which key the connection shaped like `ssh`'s proved (or its
    /// failure), so that replay judges the recorded host as the live scan did.
    func testReplayJudgesTheRecordedDecidingConnectionAsTheLiveScanDid() throws {
        let pins = "web \(host.sha256Fingerprint)\n"
        var failed = ProbeResult(host: "web", port: 22, keys: [DiscoveredKey(key: other)], serverHostKeyAlgorithms: ["ssh-ed25519"])
        failed.sshConnection = .failed(ProbeFailure(stage: .banner, code: .connectionClosed, message: "closed after its identification"))
        for (live, name) in [(probe([host, other], met: other, "ssh-ed25519", server: ["ssh-ed25519"]), "relayed"), (failed, "failed")] {
            let judgedLive = try judged(live, pins: pins)
            let document = try ScanReport(generatedAt: Date(timeIntervalSince1970: 1_790_000_000), knownHostsFiles: [], pinFiles: [],
                                          judged: [judgedLive]).encoded()
            let pairs = try ScanReplay.load(document, source: "recorded.json")
            XCTAssertEqual(pairs.first?.result.sshConnection, live.sshConnection, name)
            let replayed = FleetJudge(knownHosts: KnownHosts(files: [TestKeys.file("")]), pins: try PinSet.parse(path: "pins", bytes: Array(pins.utf8)))
                .judge(pairs[0].host, pairs[0].result, now: JudgeFixtures.now)
            XCTAssertEqual(replayed.status, judgedLive.status, name)
            XCTAssertEqual(replayed.negotiated, judgedLive.negotiated, name)
        }
        XCTAssertEqual(try judged(probe([host, other], met: other, "ssh-ed25519", server: ["ssh-ed25519"]), pins: pins).status, .pinMismatch)
        let outOfRange = String(decoding: try ScanReport(generatedAt: Date(timeIntervalSince1970: 1_790_000_000), knownHostsFiles: [], pinFiles: [],
            judged: [try judged(probe([host], met: host, "ssh-ed25519", server: ["ssh-ed25519"]), pins: pins)]).encoded(), as: UTF8.self)
            .replacingOccurrences(of: "\"error\":null,\"key\":0}", with: "\"error\":null,\"key\":7}")
        XCTAssertTrue(outOfRange.contains("\"key\":7"), "the document names the key's index")
        XCTAssertThrowsError(try ScanReplay.load(Data(outOfRange.utf8), source: "recorded.json")) { error in
            XCTAssertTrue("\(error)".contains("ssh_connection.key"), "\(error)")
        }
    }

    func testAFailedDecidingConnectionLeavesNoKeyForTrustOnFirstUse() throws {
        var result = ProbeResult(host: "web", port: 22, keys: [DiscoveredKey(key: other)], serverHostKeyAlgorithms: ["ssh-ed25519"])
        result.sshConnection = .failed(ProbeFailure(stage: .banner, code: .connectionClosed, message: "closed after its identification"))
        let judged = FleetJudge(knownHosts: KnownHosts(files: [TestKeys.file("")]), pins: nil)
            .judge(InventoryHost(name: "web", address: "web"), result, now: JudgeFixtures.now)
        XCTAssertNotEqual(judged.status, .new, "a follower's key is not the key ssh meets")
        XCTAssertEqual(judged.failure?.code, .connectionClosed)
        XCTAssertFalse(judged.keys.contains(where: \.isNegotiated))
        XCTAssertNil(FirstUseKeys(judged, offered: [other]).firstUse)
    }
}
