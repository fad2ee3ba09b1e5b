import Foundation
import XCTest
@testable import FleetTrustSSH
import FleetTrustCore
import FleetTrustTestFleet

/// The host's `Ciphers` and `MACs` reach the connection shaped like `ssh`'s and every other
/// connection of the probe: against a real sshd that offers one cipher, the probe agrees where
/// `ssh` agrees and fails where `ssh` fails ("no matching cipher found"), with the real `ssh` as
/// the oracle.
final class SSHShapedTransportTests: XCTestCase {
    private func ssh(_ port: Int, _ options: [String]) throws -> ProgramRun {
        try ProgramRun.run("/usr/bin/ssh", ["-F", "/dev/null"] + options + ["-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                                            "-o", "GlobalKnownHostsFile=/dev/null", "-o", "BatchMode=yes",
                                            "-p", String(port), "127.0.0.1", "true"], limit: 20)
    }

    private func probe(_ port: Int, ciphers: String?, macs: String? = nil) -> ProbeResult {
        var host = InventoryHost(name: "127.0.0.1", address: "127.0.0.1", port: port)
        host.sshOptions.ciphers = ciphers.map { SSHAlgorithmList($0) }
        host.sshOptions.macs = macs.map { SSHAlgorithmList($0) }
        return HostProbe(host: host, timeout: .seconds(10)).run(cancellation: ProbeCancellation())
    }

    func testTheHostsCiphersAreNegotiatedAsSSHNegotiatesThem() throws {
        let sshd = try KeyExchangeTestSSHD(keys: [.init(type: "ed25519", bits: "256")],
                                           extraConfig: ["Ciphers aes256-ctr,aes128-ctr", "MACs hmac-sha2-512,hmac-sha2-256"])
        defer { sshd.stop() }
        // ssh agrees with the first of its own list the server has (ssh's defaults would give
        // aes128-ctr and hmac-sha2-256 here).
        let agreed = try ssh(sshd.port, ["-o", "Ciphers=aes256-ctr,aes128-ctr", "-o", "MACs=hmac-sha2-512", "-v"])
        XCTAssertTrue(agreed.stderrText.contains("cipher: aes256-ctr MAC: hmac-sha2-512"), agreed.stderrText)
        let result = probe(sshd.port, ciphers: "aes256-ctr,aes128-ctr", macs: "hmac-sha2-512")
        guard case .proved(let met)? = result.sshConnection else { return XCTFail("\(String(describing: result.sshConnection))") }
        XCTAssertEqual(met.algorithms?.cipher, "aes256-ctr")
        XCTAssertEqual(met.algorithms?.mac, "hmac-sha2-512")

        let refused = try ssh(sshd.port, ["-o", "Ciphers=aes192-ctr"])
        XCTAssertTrue(refused.stderrText.contains("no matching cipher found"), refused.stderrText)
        let failed = probe(sshd.port, ciphers: "aes192-ctr")
        guard case .failed(let failure)? = failed.sshConnection else { return XCTFail("\(String(describing: failed.sshConnection))") }
        XCTAssertEqual(failure.code, .noCommonAlgorithm, failure.message.value)
        XCTAssertTrue(failure.message.value.contains("cipher"), failure.message.value)
    }

    /// A server that speaks only a cipher the user enabled (CBC, as an old switch): every key type
    /// is fetched with it, not only the one `ssh`'s connection meets.
    func testEveryKeyTypeIsFetchedWithTheCipherTheUserEnabled() throws {
        let sshd = try KeyExchangeTestSSHD(keys: [.init(type: "ed25519", bits: "256"), .init(type: "ecdsa", bits: "256"), .init(type: "rsa", bits: "2048")],
                                           extraConfig: ["Ciphers aes128-cbc"])
        defer { sshd.stop() }
        let agreed = try ssh(sshd.port, ["-o", "Ciphers=+aes128-cbc", "-v"])
        XCTAssertTrue(agreed.stderrText.contains("cipher: aes128-cbc"), agreed.stderrText)
        let result = probe(sshd.port, ciphers: "+aes128-cbc")
        XCTAssertEqual(Set(result.keys.map(\.key.type)), ["ssh-ed25519", "ecdsa-sha2-nistp256", "ssh-rsa"], "\(result.failures)")
        XCTAssertEqual(result.ssh?.unfetched ?? [], [])
    }

    /// A server with no MAC among the host's: `ssh` fails ("no matching MAC found"), and no key is
    /// taken from libssh instead, which would negotiate a MAC the host does not allow.
    func testNoKeyIsFetchedWithAMACTheHostDoesNotAllow() throws {
        let sshd = try KeyExchangeTestSSHD(keys: [.init(type: "ed25519", bits: "256"), .init(type: "rsa", bits: "2048")],
                                           extraConfig: ["Ciphers aes128-ctr", "MACs hmac-sha1"])
        defer { sshd.stop() }
        let refused = try ssh(sshd.port, ["-o", "MACs=hmac-sha2-256"])
        XCTAssertTrue(refused.stderrText.contains("no matching MAC found"), refused.stderrText)
        let result = probe(sshd.port, ciphers: nil, macs: "hmac-sha2-256")
        XCTAssertEqual(result.keys.map(\.key.type), [], "no key through a MAC the host forbids")
        guard case .failed(let failure)? = result.sshConnection else { return XCTFail("\(String(describing: result.sshConnection))") }
        XCTAssertEqual(failure.code, .noCommonAlgorithm, failure.message.value)
        XCTAssertTrue(failure.message.value.contains("MAC"), failure.message.value)
    }
}
