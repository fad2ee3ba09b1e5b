import Foundation
import XCTest
@testable import FleetTrustCore

/// The documented order of precedence (`JudgedHost.status`), pair by pair: for every two
/// conditions a host can meet at once, the louder one is the host's status, whichever way round.
/// Real keys and a real forged certificate (ssh-keygen, checked-in fixtures), judged by the one judge.
final class StatusPrecedenceTests: XCTestCase {
    /// The conditions, loudest first, as the README lists them.
    enum Condition: String, CaseIterable {
        case revoked, changed, pinMismatch, invalidCertificate, noUsableKey, new, trusted
    }

    private var keys: [String: HostKey] = [:]
    private var forged: HostKey!

    override func setUpWithError() throws {
        for name in ["ed", "ec", "otherEC", "rsa", "ca", "unrelated"] { keys[name] = try JudgeFixtures.key("precedence", name) }
        // The forged certificate certifies the same key the trusted condition records, so combining
        // the two adds no changed key: only the forgery. (`ssh-keygen -s ca -I id -h -n web ed.pub`, checked in.)
        var blob = try JudgeFixtures.certificate("precedence", ["ca", "-h", "-n", "web"]).blob
        blob[blob.count - 3] ^= 1
        forged = try HostKey(type: "ssh-ed25519-cert-v01@openssh.com", blob: blob)
    }

    /// What each condition adds to the host: keys it presents, known_hosts lines, pins, and a
    /// restriction of the server's host-key algorithms.
    private struct Setup {
        var keys: [HostKey] = []
        var knownHosts: [String] = []
        var pins: [String] = []
        var serverAlgorithms: [String]?
    }

    private func setup(_ condition: Condition) -> Setup {
        switch condition {
        case .revoked: return Setup(keys: [keys["rsa"]!], knownHosts: ["@revoked * \(keys["rsa"]!.openSSHLine)"])
        case .changed: return Setup(keys: [keys["ec"]!], knownHosts: ["web \(keys["otherEC"]!.openSSHLine)"])
        case .pinMismatch: return Setup(pins: ["web \(keys["unrelated"]!.sha256Fingerprint)"])
        case .invalidCertificate: return Setup(keys: [forged])
        case .noUsableKey: return Setup(serverAlgorithms: ["ssh-dss"])
        case .new: return Setup(keys: [keys["ed"]!])
        case .trusted: return Setup(keys: [keys["ed"]!], knownHosts: ["web \(keys["ed"]!.openSSHLine)"])
        }
    }

    private func status(_ conditions: [Condition]) throws -> HostStatus {
        var all = Setup()
        for condition in conditions {
            let part = setup(condition)
            for key in part.keys where !all.keys.contains(key) { all.keys.append(key) }
            all.knownHosts += part.knownHosts
            all.pins += part.pins
            if let restricted = part.serverAlgorithms { all.serverAlgorithms = restricted }
        }
        if all.keys.isEmpty { all.keys = [keys["ed"]!] }
        let pins = all.pins.isEmpty ? nil : try PinSet.parse(path: "pins", bytes: Array((all.pins.joined(separator: "\n") + "\n").utf8))
        let knownHosts = KnownHosts(files: [TestKeys.file(all.knownHosts.joined(separator: "\n") + "\n")])
        let probe = ProbeResult(host: "web", port: 22, keys: all.keys.map { DiscoveredKey(key: $0) },
                                serverHostKeyAlgorithms: all.serverAlgorithms)
        return FleetJudge(knownHosts: knownHosts, pins: pins).judge(InventoryHost(name: "web"), probe).status
    }

    private func expected(_ condition: Condition) -> HostStatus {
        switch condition {
        case .revoked: return .revoked
        case .changed: return .changed
        case .pinMismatch: return .pinMismatch
        case .invalidCertificate: return .invalidCertificate
        case .noUsableKey: return .error
        case .new: return .new
        case .trusted: return .trusted
        }
    }

    func testEachConditionAloneGivesItsStatus() throws {
        for condition in Condition.allCases {
            XCTAssertEqual(try status([condition]), expected(condition), condition.rawValue)
        }
    }

    func testForEveryPairTheLouderConditionWinsInEitherOrder() throws {
        let all = Condition.allCases
        var pairs = 0
        for (i, louder) in all.enumerated() {
            for quieter in all[(i + 1)...] where !(louder == .new && quieter == .trusted) {
                XCTAssertEqual(try status([louder, quieter]), expected(louder), "\(louder.rawValue) + \(quieter.rawValue)")
                XCTAssertEqual(try status([quieter, louder]), expected(louder), "\(quieter.rawValue) + \(louder.rawValue)")
                pairs += 1
            }
        }
        XCTAssertEqual(pairs, 20, "every pair but new+trusted, which cannot hold at once for the key ssh meets")
    }
}
