import Foundation
import XCTest
@testable import FleetTrustSSH
import FleetTrustCore
import FleetTrustTestFleet

/// A relay that tells `ssh` from us by when and what our KEXINIT says, or by whether the
/// connection comes alone, and routes `ssh` to a rogue server, must route our deciding connection
/// there too: the real `ssh` says CHANGED, and the judge, given the probe of the real sshd behind
/// the relay, says changed as well.
final class KexInitGateTests: XCTestCase {
    func testARelayGatingOnTheKexInitShowsOurDecidingConnectionWhatItShowsSSH() throws {
        let real = try KeyExchangeTestSSHD(keys: [.init(type: "ed25519", bits: "256")])
        defer { real.stop() }
        let rogue = try KeyExchangeTestSSHD(keys: [.init(type: "ed25519", bits: "256")])
        defer { rogue.stop() }
        let knownHosts = FileManager.default.temporaryDirectory.appendingPathComponent("gate-known-hosts-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: knownHosts) }
        for gate in KexInitGateRelay.Gate.allCases {
            let relay = try KexInitGateRelay(gate: gate, realPort: real.port, roguePort: rogue.port)
            defer { relay.close() }
            try "[127.0.0.1]:\(relay.port) \(try real.publicKey(0).openSSHLine)\n".write(toFile: knownHosts, atomically: true, encoding: .utf8)
            let ssh = try SSHOracle.check(name: "127.0.0.1", port: relay.port, knownHosts: knownHosts)
            XCTAssertEqual(ssh.verdict, .changed, "\(gate): \(ssh.transcript)")

            let judge = FleetJudge(knownHosts: try KnownHosts.read(paths: [knownHosts]), pins: nil)
            let host = InventoryHost(name: "127.0.0.1", address: "127.0.0.1", port: relay.port)
            let result = HostProbe(host: host, timeout: .seconds(10), sshHostKeyAlgorithms: judge.sshHostKeyAlgorithms(for: host))
                .run(cancellation: ProbeCancellation())
            guard case .proved(let met)? = result.sshConnection else {
                return XCTFail("\(gate): the ssh-shaped connection proved nothing: \(String(describing: result.sshConnection))")
            }
            XCTAssertEqual(met.key.fingerprint, try rogue.publicKey(0).fingerprint, "\(gate)")
            XCTAssertEqual(met.algorithms?.keyExchange, "sntrup761x25519-sha512", "\(gate): what ssh negotiates with a stock sshd")
            XCTAssertEqual(judge.judge(host, result).status, .changed, "\(gate): \(result.keys.map(\.key.fingerprint))")
        }
    }
}
