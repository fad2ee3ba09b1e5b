import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet
@testable import FleetTrustSSH

/// The decisive test of our sntrup761: a real sshd that speaks only
/// `sntrup761x25519-sha512@openssh.com`. If our key pair or decapsulation differed from OpenSSH's
/// by one bit, the shared secret would differ and the server's signature over the exchange hash
/// would not verify, so every proved key here is a proof of the whole KEM.
final class Sntrup761ExchangeTests: XCTestCase {
    nonisolated(unsafe) private static var sshd: KeyExchangeTestSSHD?
    private static let method = "sntrup761x25519-sha512@openssh.com"

    override class func setUp() {
        sshd = try? KeyExchangeTestSSHD(
            keys: [.init(type: "ed25519", bits: "256", certificateCA: nil),
                   .init(type: "ecdsa", bits: "256", certificateCA: nil),
                   .init(type: "rsa", bits: "3072", certificateCA: nil)],
            extraConfig: ["KexAlgorithms \(method)"])
    }

    override class func tearDown() {
        sshd?.stop()
        sshd = nil
    }

    private func server() throws -> KeyExchangeTestSSHD { try XCTUnwrap(Self.sshd, "sshd did not start") }

    func testServerWithOnlySntrup761ProvesEachKeyWithTheFingerprintOfSshKeygen() throws {
        let sshd = try server()
        for (algorithm, index) in [("ssh-ed25519", 0), ("ecdsa-sha2-nistp256", 1), ("rsa-sha2-512", 2)] {
            let report = KeyExchangeProbe.run(host: "127.0.0.1", port: sshd.port, hostKeyAlgorithms: [algorithm], timeout: 20)
            let found = try report.outcome.get()
            let oracle = try Tool.check("/usr/bin/ssh-keygen", ["-lf", sshd.keyPaths[index] + ".pub"]).split(separator: " ")
            XCTAssertEqual(found.key.sha256Fingerprint, String(oracle[1]), algorithm)
            XCTAssertEqual(found.key, try sshd.publicKey(index), algorithm)
            XCTAssertEqual(found.algorithms?.keyExchange, Self.method, algorithm)
            XCTAssertEqual(found.algorithms?.hostKey, algorithm)
        }
    }

    /// What a scan does with the host: the event-driven engine's connections, one per key type,
    /// each through the only method the server allows.
    func testAWholeHostProbeProvesEveryKeyOfTheServer() throws {
        let sshd = try server()
        let result = HostProbe(host: InventoryHost(name: "pq-only", address: "127.0.0.1", port: sshd.port), timeout: .seconds(20))
            .run(cancellation: ProbeCancellation())
        XCTAssertEqual(result.failures.map(\.message.value), [])
        XCTAssertEqual(Set(result.keys.map(\.key)), Set(try (0..<3).map { try sshd.publicKey($0) }))
        XCTAssertEqual(Set(result.keys.compactMap(\.algorithms?.keyExchange)), [Self.method])
    }

    /// Fresh key pairs each time: a rare slip (a decryption of the wrong weight, a carry in the
    /// encoding) would show as one exchange among several failing.
    func testRepeatedExchangesAllVerify() throws {
        let sshd = try server()
        let expected = try sshd.publicKey(0)
        for attempt in 0..<4 {
            let report = KeyExchangeProbe.run(host: "127.0.0.1", port: sshd.port, hostKeyAlgorithms: ["ssh-ed25519"], timeout: 20)
            XCTAssertEqual(try report.outcome.get().key, expected, "attempt \(attempt)")
        }
    }
}
