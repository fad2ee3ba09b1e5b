import XCTest
@testable import FleetTrustSSH
import FleetTrustCore

/// Every sshd handshake costs the server a fork and a re-exec: once the connection shaped like
/// `ssh`'s has proved a key and read the server's list, a probe opens only the exchanges still
/// needed, so a server's keys cost one handshake each, counted from the real sshd's own log.
final class HostProbeHandshakeCountTests: XCTestCase {
    func testAStockSSHDWithThreeKeyTypesIsProvedWithThreeHandshakes() throws {
        let sshd = try KeyExchangeTestSSHD(keys: [.init(type: "ed25519", bits: "256"), .init(type: "ecdsa", bits: "256"),
                                                  .init(type: "rsa", bits: "2048")], logLevel: "VERBOSE")
        defer { sshd.stop() }
        let before = sshd.connectionsAccepted
        XCTAssertGreaterThan(before, 0, "sshd logs its readiness check's connection: the count reads a real log")
        let result = HostProbe(host: InventoryHost(name: "127.0.0.1", address: "127.0.0.1", port: sshd.port), timeout: .seconds(10))
            .run(cancellation: ProbeCancellation())
        XCTAssertEqual(Set(result.keys.map(\.key.fingerprint)), Set(try (0..<3).map { try sshd.publicKey($0).fingerprint }),
                       "\(result.failures.map(\.message.value))")
        XCTAssertEqual(result.keys.count, 3)
        XCTAssertTrue(result.failures.isEmpty, "\(result.failures)")
        guard case .proved(let met)? = result.sshConnection else { return XCTFail("\(String(describing: result.sshConnection))") }
        XCTAssertEqual(met.key.fingerprint, try sshd.publicKey(0).fingerprint, "ssh meets the Ed25519 key of a stock sshd")
        XCTAssertEqual(sshd.connectionsAccepted - before, 3, "one handshake per key, the deciding connection's included")
    }

    /// A certificate met by the deciding connection stands for the certificates-first exchange;
    /// its plain key, and the other types, still get one handshake each, as they are reported.
    func testACertificateMetByTheDecidingConnectionIsNotFetchedAgain() throws {
        let sshd = try KeyExchangeTestSSHD(keys: [.init(type: "ed25519", bits: "256", certificateCA: ("ed25519", "256", nil)),
                                                  .init(type: "ecdsa", bits: "256"), .init(type: "rsa", bits: "2048")],
                                           logLevel: "VERBOSE")
        defer { sshd.stop() }
        let before = sshd.connectionsAccepted
        let result = HostProbe(host: InventoryHost(name: "127.0.0.1", address: "127.0.0.1", port: sshd.port), timeout: .seconds(10))
            .run(cancellation: ProbeCancellation())
        XCTAssertEqual(result.keys.map(\.key.type).sorted(),
                       ["ecdsa-sha2-nistp256", "ssh-ed25519", "ssh-ed25519-cert-v01@openssh.com", "ssh-rsa"],
                       "\(result.failures.map(\.message.value))")
        XCTAssertTrue(result.failures.isEmpty, "\(result.failures)")
        guard case .proved(let met)? = result.sshConnection else { return XCTFail("\(String(describing: result.sshConnection))") }
        XCTAssertEqual(met.key.type, "ssh-ed25519-cert-v01@openssh.com")
        XCTAssertEqual(sshd.connectionsAccepted - before, 4)
    }
}
