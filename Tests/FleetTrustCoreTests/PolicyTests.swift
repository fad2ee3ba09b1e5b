import Foundation
import XCTest
@testable import FleetTrustCore

/// The trust policies on real certificates made by `ssh-keygen` from two CAs (checked-in
/// fixtures), judged by the one judge.
final class PolicyTests: XCTestCase {
    private var directory = ""
    private var caA: HostKey!
    private var caB: HostKey!
    private var hostKey: HostKey!
    private var other: HostKey!
    /// Seconds since the epoch the tests judge at (certificate validity is relative to it).
    private let now = JudgeFixtures.now

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "ft-policy-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        caA = try JudgeFixtures.key("policy", "caA")
        caB = try JudgeFixtures.key("policy", "caB")
        hostKey = try JudgeFixtures.key("policy", "host")
        other = try JudgeFixtures.key("policy", "other")
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: directory) }

    /// The host certificate for `host.pub` that `ca` signed (`ssh-keygen -s CA -I id -h ARGS`).
    private func certificate(_ ca: String, _ args: [String]) throws -> HostKey {
        try JudgeFixtures.certificate("policy", [ca, "-h"] + args)
    }

    /// A validity from `from` to `to` days after `now` (to forever without `to`).
    private func validity(days from: Int, _ to: Int?) -> [String] {
        ["-V", "days:\(from):\(to.map(String.init) ?? "")"]
    }

    private func judged(_ keys: [HostKey], known: String = "", pins: String? = nil, policy: String? = nil,
                        file: String? = nil, name: String = "web") throws -> JudgedHost {
        var host = InventoryHost(name: name, address: name)
        host.policy = policy
        let pinSet = try pins.map { try PinSet.parse(path: "pins", bytes: Array($0.utf8)) }
        let policies = try PolicyResolver(file: file.map { try PolicyFile.parse(path: "policy", bytes: Array($0.utf8)) })
        return FleetJudge(knownHosts: KnownHosts(files: [TestKeys.file(known)]), pins: pinSet, policies: policies)
            .judge(host, ProbeResult(host: name, port: 22, keys: keys.map { DiscoveredKey(key: $0) }), now: now)
    }

    func testPinnedNeedsAPinThatAppliesAndMatches() throws {
        let known = "web \(hostKey.openSSHLine)\n"
        XCTAssertEqual(try judged([hostKey], known: known, policy: "standard").status, .trusted)
        let unpinned = try judged([hostKey], known: known, policy: "pinned")
        XCTAssertEqual(unpinned.status, .unpinned)
        XCTAssertEqual(unpinned.standardStatus, .trusted)
        XCTAssertEqual(unpinned.saving, .refused(.notPinned))
        XCTAssertEqual(try judged([hostKey], known: known, pins: "web \(hostKey.sha256Fingerprint)\n", policy: "pinned").status, .trusted)
        XCTAssertEqual(try judged([hostKey], known: known, pins: "web \(other.sha256Fingerprint)\n", policy: "pinned").status, .pinMismatch)
        XCTAssertEqual(try judged([hostKey], known: "web \(other.openSSHLine)\n", policy: "pinned").status, .changed,
                       "a changed key stays changed whatever the policy")
    }

    func testPinOnlyIgnoresKnownHostsAndLetsThePinDecide() throws {
        let changedInKnownHosts = "web \(other.openSSHLine)\n"
        let trusted = try judged([hostKey], known: changedInKnownHosts, pins: "web \(hostKey.sha256Fingerprint)\n", policy: "pin-only")
        XCTAssertEqual(trusted.status, .trusted)
        XCTAssertEqual(trusted.trustedBy, [.pin])
        XCTAssertEqual(trusted.standardStatus, .changed, "what ssh alone would say is kept")
        XCTAssertEqual(try judged([hostKey], pins: "web \(other.sha256Fingerprint)\n", policy: "pin-only").status, .pinMismatch)
        XCTAssertEqual(try judged([hostKey], policy: "pin-only").status, .unpinned)
        var forged = try certificate("caA", ["-n", "web"]).blob
        forged[forged.count - 3] ^= 1
        let withForgery = try judged([hostKey, try HostKey(type: "ssh-ed25519-cert-v01@openssh.com", blob: forged)],
                                     pins: "web \(hostKey.sha256Fingerprint)\n", policy: "pin-only")
        XCTAssertEqual(withForgery.status, .invalidCertificate, "no policy quietens a forged certificate")
    }

    func testCAPolicyNeedsAValidCertificateFromAPinnedCA() throws {
        let valid = try certificate("caA", ["-n", "web"])
        let caPin = "web ca:\(caA.sha256Fingerprint)\n"
        let trusted = try judged([valid, hostKey], pins: caPin, policy: "ca")
        XCTAssertEqual(trusted.status, .trusted)
        XCTAssertEqual(trusted.trustedBy, [.caPin])
        XCTAssertEqual(trusted.keys.map(\.pin), [.matched, .notListed])
        XCTAssertEqual(try judged([hostKey], pins: caPin, policy: "ca").status, .pinMismatch, "plain keys do not count")
        XCTAssertEqual(try judged([try certificate("caB", ["-n", "web"])], pins: caPin, policy: "ca").status, .pinMismatch,
                       "another CA's certificate does not count")
        XCTAssertEqual(try judged([try certificate("caA", ["-n", "other"])], pins: caPin, policy: "ca").status, .pinMismatch,
                       "wrong principals: not valid for the host")
        XCTAssertEqual(try judged([try certificate("caA", ["-n", "web"] + validity(days: -10, -1))], pins: caPin, policy: "ca").status,
                       .pinMismatch, "expired")
        XCTAssertEqual(try judged([valid], policy: "ca").status, .unpinned, "no CA pin applies")
    }

    func testACAPinSatisfiesTheStandardPolicyToo() throws {
        let valid = try certificate("caA", ["-n", "web"])
        let matched = try judged([valid, hostKey], known: "web \(hostKey.openSSHLine)\n", pins: "web ca:\(caA.sha256Fingerprint)\n")
        XCTAssertEqual(matched.pin.verdict, .matched)
        XCTAssertEqual(matched.status, .trusted)
        let mismatch = try judged([try certificate("caB", ["-n", "web"]), hostKey], known: "web \(hostKey.openSSHLine)\n",
                                  pins: "web ca:\(caA.sha256Fingerprint)\n")
        XCTAssertEqual(mismatch.status, .pinMismatch)
    }

    func testOffIsUncheckedNeverTrustedAndNeverSaved() throws {
        let off = try judged([hostKey], known: "web \(hostKey.openSSHLine)\n", policy: "off")
        XCTAssertEqual(off.status, .unchecked)
        XCTAssertEqual(off.status.alarmLevel, 1)
        XCTAssertEqual(off.saving, .refused(.unchecked))
        XCTAssertEqual(off.trustedBy, [])
    }

    /// A revoked key is `revoked` under every policy but `off` (`unchecked`, never trusted), whether
    /// known_hosts revokes it, its CA, or the `RevokedHostKeys` file does, even when its pin matches,
    /// its CA is pinned, or a custom policy would trust anything.
    func testARevocationWinsUnderEveryPolicyButOff() throws {
        let certificate = try certificate("caA", ["-n", "web"])
        let pins = "web \(hostKey.sha256Fingerprint) ca:\(caA.sha256Fingerprint)\n"
        let trustsAnything = TrustPolicy(name: "trusts-anything") { _ in PolicyDecision(status: .trusted, reason: .pinMatched, trustedBy: [.pin]) }
        let revokedList = directory + "/revoked"
        try "\(hostKey.openSSHLine)\n".write(toFile: revokedList, atomically: true, encoding: .utf8)
        let revocations: [(String, String, [String]?)] = [
            ("known_hosts @revoked", "web \(hostKey.openSSHLine)\n@revoked web \(hostKey.openSSHLine)\n", nil),
            ("@revoked CA", "@cert-authority web \(caA.openSSHLine)\n@revoked * \(caA.openSSHLine)\n", nil),
            ("RevokedHostKeys", "web \(hostKey.openSSHLine)\n@cert-authority web \(caA.openSSHLine)\n", [revokedList]),
        ]
        for (source, known, list) in revocations {
            for policy in PolicyName.allCases.map(\.rawValue) + ["trusts-anything"] {
                var host = InventoryHost(name: "web", address: "web")
                host.policy = policy
                host.sshOptions.revokedHostKeys = list
                var judge = FleetJudge(knownHosts: KnownHosts(files: [TestKeys.file(known)]), pins: try PinSet.parse(path: "pins", bytes: Array(pins.utf8)),
                                       policies: PolicyResolver(custom: [trustsAnything]))
                judge.revocationLists = RevocationLists.read(hosts: [host])
                let judged = judge.judge(host, ProbeResult(host: "web", port: 22, keys: [DiscoveredKey(key: certificate), DiscoveredKey(key: hostKey)]),
                                         now: now)
                let expected: HostStatus = policy == "off" ? .unchecked : .revoked
                XCTAssertEqual(judged.status, expected, "\(source) under \(policy)")
                XCTAssertEqual(judged.trustedBy, [], "\(source) under \(policy)")
                XCTAssertEqual(judged.saving, .refused(policy == "off" ? .unchecked : .revoked), "\(source) under \(policy)")
                if list != nil, policy != "off" {
                    let evidence = judged.keys.flatMap { $0.judgement?.evidence ?? [] }.filter { $0.role == .revokedHostKeys }
                    XCTAssertEqual(evidence.first?.sentence, "\(revokedList):1 (RevokedHostKeys) revokes ssh-ed25519 \(hostKey.sha256Fingerprint)")
                }
            }
        }
    }

    /// `ssh` fails every connection when it cannot use the `RevokedHostKeys` file: never trusted, an
    /// error naming the file under every policy but `off`.
    func testAnUnusableRevocationListIsAnErrorNamingTheFileUnderEveryPolicyButOff() throws {
        for policy in PolicyName.allCases.map(\.rawValue) {
            var host = InventoryHost(name: "web", address: "web")
            host.policy = policy
            host.sshOptions.revokedHostKeys = [directory + "/absent"]
            var judge = FleetJudge(knownHosts: KnownHosts(files: [TestKeys.file("web \(hostKey.openSSHLine)\n")]),
                                   pins: try PinSet.parse(path: "pins", bytes: Array("web \(hostKey.sha256Fingerprint)\n".utf8)))
            judge.revocationLists = RevocationLists.read(hosts: [host])
            let judged = judge.judge(host, ProbeResult(host: "web", port: 22, keys: [DiscoveredKey(key: hostKey)]), now: now)
            XCTAssertEqual(judged.status, policy == "off" ? .unchecked : .error, policy)
            XCTAssertEqual(judged.standardStatus, policy == "off" ? .error : nil, "\(policy): what ssh alone would do is fail")
            if policy != "off" {
                XCTAssertEqual(judged.failure?.stage, .hostKey, policy)
                XCTAssertTrue(judged.failure?.message.value.contains("RevokedHostKeys \(directory)/absent: no such file") == true,
                              "\(judged.failure?.message.value ?? "no failure")")
            }
        }
    }

    func testThePolicyFileFirstMatchWinsAndTheInventoryVariableWinsOverIt() throws {
        let file = "# policies\nweb* pin-only\n* pinned\n"
        XCTAssertEqual(try judged([hostKey], file: file).policy, "pin-only")
        XCTAssertEqual(try judged([hostKey], file: file, name: "db").policy, "pinned")
        let fromInventory = try judged([hostKey], policy: "off", file: file)
        XCTAssertEqual(fromInventory.policy, "off")
        XCTAssertEqual(fromInventory.policySource, .inventory)
        XCTAssertEqual(try judged([hostKey], file: file).policySource, .file(SourceLocation(file: "policy", line: 2)))
        XCTAssertEqual(try judged([hostKey]).policy, "standard")
    }

    func testAPolicyFileWithBadLinesIsRefusedNamingEveryOne() {
        XCTAssertThrowsError(try PolicyFile.parse(path: "policy", bytes: Array("web pinned\ndb strict\nbad\nx pin-only extra\n*,!0:0::1 off\n".utf8))) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("policy:5: 0:0::1 is written ::1 by ssh"), text)
            XCTAssertTrue(text.contains("policy:2: unknown policy 'strict'"), text)
            XCTAssertTrue(text.contains("policy:3: expected PATTERNS POLICY"), text)
            XCTAssertTrue(text.contains("policy:4: expected PATTERNS POLICY"), text)
            XCTAssertFalse(text.contains("policy:1"), text)
        }
    }

    func testACustomPolicyUsesTheSameAPIAsTheBuiltInOnes() throws {
        let strict = TrustPolicy(name: "recorded-and-pinned") { facts in
            facts.standard.status == .trusted && facts.pin.verdict != .matched
                ? PolicyDecision(status: .unpinned, reason: .notPinned) : facts.standard
        }
        var host = InventoryHost(name: "web")
        host.policy = "recorded-and-pinned"
        let judge = FleetJudge(knownHosts: KnownHosts(files: [TestKeys.file("web \(hostKey.openSSHLine)\n")]), pins: nil,
                               policies: PolicyResolver(custom: [strict]))
        let judged = judge.judge(host, ProbeResult(host: "web", port: 22, keys: [DiscoveredKey(key: hostKey)]), now: now)
        XCTAssertEqual(judged.status, .unpinned)
        XCTAssertEqual(judged.policy, "recorded-and-pinned")
    }

    func testTheCertificateAuditNamesDaysLeftAndEveryWarning() throws {
        func audit(_ ca: String, _ args: [String], known: String = "") throws -> CertificateAudit? {
            try judged([try certificate(ca, args)], known: known).keys.first?.audit
        }
        let vouched = "@cert-authority web \(caA.openSSHLine)\n"
        let fine = try XCTUnwrap(audit("caA", ["-n", "web"] + validity(days: -1, 100), known: vouched))
        XCTAssertEqual(fine.expiresInDays, 100)
        XCTAssertEqual(fine.warnings, [])
        XCTAssertEqual(try audit("caA", ["-n", "web"] + validity(days: -1, 5), known: vouched)?.warnings, [.expiresSoon])
        XCTAssertEqual(try audit("caA", ["-n", "web"] + validity(days: -1, 5), known: vouched)?.expiresInDays, 5)
        XCTAssertEqual(try audit("caA", ["-n", "web"] + validity(days: -10, -2), known: vouched)?.warnings, [.expired])
        XCTAssertEqual(try audit("caA", ["-n", "web"] + validity(days: 2, 50), known: vouched)?.warnings, [.notYetValid])
        let forever = try XCTUnwrap(audit("caA", ["-n", "web"], known: vouched))
        XCTAssertNil(forever.expiresInDays)
        XCTAssertEqual(forever.warnings, [.noExpiry])
        XCTAssertEqual(try audit("caA", ["-n", "db"] + validity(days: -1, 100), known: vouched)?.warnings, [.principalMismatch])
        XCTAssertEqual(try audit("caB", ["-n", "web", "-t", "ssh-rsa"] + validity(days: -1, 100),
                                 known: "@cert-authority web \(caB.openSSHLine)\n")?.warnings, [.sha1Signature])
        XCTAssertEqual(try audit("caA", ["-n", "web"] + validity(days: -1, 100))?.warnings, [.unknownCA])
        let pinnedCA = try judged([try certificate("caA", ["-n", "web"] + validity(days: -1, 100))], pins: "web ca:\(caA.sha256Fingerprint)\n")
        XCTAssertEqual(pinnedCA.keys.first?.audit?.warnings, [], "a CA pin vouches for its CA")
    }
}

final class TrustProbeAssessmentTests: XCTestCase {
    func testProbeWithoutKeysIsUnreachableOrUnverifiedByStage() throws {
        let known = KnownHosts(files: [TestKeys.file("[web]:2222 \(TestKeys.a.openSSHLine)\n")])
        let refused = ProbeResult(host: "web", port: 2222, failures: [ProbeFailure(stage: .connect, code: .connectionRefused, message: "refused")])
        let judge = FleetJudge(knownHosts: known, pins: nil)
        let host = InventoryHost(name: "WEB", port: 2222)
        XCTAssertEqual(judge.judge(host, refused).status, .unreachable)
        let kex = ProbeResult(host: "web", port: 2222, failures: [ProbeFailure(stage: .keyExchange, code: .kexFailed, message: "no")])
        XCTAssertEqual(judge.judge(host, kex).status, .unverified, "known_hosts records a key: a failed key exchange is an alarm")
        XCTAssertEqual(FleetJudge(knownHosts: KnownHosts(files: []), pins: nil).judge(host, kex).status, .error)
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
