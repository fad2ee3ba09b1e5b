import Foundation
import XCTest
@testable import FleetTrustSSH
import FleetTrustCore
import FleetTrustTestFleet

/// The paths of a host's probe that the first round does not take: libssh for a server only it
/// can negotiate with, and the up-front certificates-first offer for a server that sends its
/// KEXINIT only after the client's.
final class LibsshFallbackTests: XCTestCase {
    /// A real sshd whose only key exchange (`diffie-hellman-group14-sha1`) our client does not
    /// implement, for a host whose `KexAlgorithms +diffie-hellman-group14-sha1` lets `ssh` reach
    /// it: every key comes through libssh, proved by a completed exchange.
    func testAServerOnlyLibsshCanNegotiateWithYieldsEveryKeyThroughLibssh() throws {
        let sshd = try KeyExchangeTestSSHD(keys: [.init(type: "ed25519", bits: "256"), .init(type: "ecdsa", bits: "256"),
                                                  .init(type: "rsa", bits: "2048")],
                                           extraConfig: ["KexAlgorithms diffie-hellman-group14-sha1"])
        defer { sshd.stop() }
        var host = InventoryHost(name: "old-switch", address: "127.0.0.1", port: sshd.port)
        host.sshOptions.kexAlgorithms = "+diffie-hellman-group14-sha1"
        let result = HostProbe(host: host, timeout: .seconds(5)).run(cancellation: ProbeCancellation())
        XCTAssertEqual(Set(result.keys.map(\.key.fingerprint)), Set(try (0..<3).map { try sshd.publicKey($0).fingerprint }),
                       "\(result.failures.map(\.message.value))")
        XCTAssertEqual(Set(result.keys.map { $0.algorithms?.keyExchange }), ["diffie-hellman-group14-sha1"])
        XCTAssertEqual(result.keys.first { $0.key.type == "ssh-rsa" }?.algorithms?.hostKey, "rsa-sha2-512",
                       "RSA is asked for with SHA-2, as ssh asks for it")
        XCTAssertTrue(result.failures.isEmpty, "\(result.failures)")
    }

    /// libssh alone, one key type asked for: the key the server proved, and its refusal of a type
    /// it does not have names the server's list (which the plan then follows).
    func testLibsshProvesTheAskedTypeAndItsRefusalNamesTheServersList() throws {
        let sshd = try KeyExchangeTestSSHD(keys: [.init(type: "ecdsa", bits: "384")],
                                           extraConfig: ["KexAlgorithms diffie-hellman-group14-sha1"])
        defer { sshd.stop() }
        let endpoint = ProbeEndpoint.direct(try XCTUnwrap(Resolver.resolve("127.0.0.1", port: sshd.port, deadline: .now + .seconds(5),
                                                                           cancellation: ProbeCancellation()).get().first))
        let found = HostKeyProbe(endpoint: endpoint, port: sshd.port, hostKeyAlgorithms: "ecdsa-sha2-nistp384", timeout: .seconds(5),
                                   keyExchange: KeyExchangeAlgorithms.offered("+diffie-hellman-group14-sha1"))
            .run(cancellation: ProbeCancellation())
        XCTAssertEqual(found.key?.key.fingerprint, try sshd.publicKey(0).fingerprint, "\(String(describing: found.failure))")
        XCTAssertEqual(found.key?.algorithms?.keyExchange, "diffie-hellman-group14-sha1")
        let refused = HostKeyProbe(endpoint: endpoint, port: sshd.port, hostKeyAlgorithms: "ssh-ed25519", timeout: .seconds(5),
                                   keyExchange: KeyExchangeAlgorithms.offered("+diffie-hellman-group14-sha1"))
            .run(cancellation: ProbeCancellation())
        XCTAssertNil(refused.key)
        XCTAssertEqual(refused.serverHostKeyAlgorithms, ["ecdsa-sha2-nistp384"], "\(String(describing: refused.failure))")
    }

    /// A server that waits for the client's KEXINIT before it sends its own, with a host
    /// certificate: the certificate `ssh` would meet is fetched, and every plain key.
    func testAServerSendingItsKexInitAfterTheClientsYieldsItsCertificateAndEveryKey() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("late-kexinit-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for (name, type, bits) in [("ed", "ed25519", nil), ("ec", "ecdsa", 256), ("ca", "ed25519", nil)] as [(String, String, Int?)] {
            try KeyFiles.generate(type: type, bits: bits, path: "\(directory)/\(name)")
        }
        try KeyFiles.certify(publicKeyPath: "\(directory)/ed.pub", caPath: "\(directory)/ca", identity: "late",
                             principals: ["127.0.0.1"], output: "\(directory)/late-cert.pub")
        let certificate = try KeyFiles.blob(publicKeyFile: "\(directory)/late-cert.pub")
        let server = try FakeKeyServer(keys: [
            FakeHostKey(privateKeyPath: "\(directory)/ed", presentedBlob: certificate, algorithms: ["ssh-ed25519-cert-v01@openssh.com"]),
            try FakeHostKey.plain("\(directory)/ed", algorithms: ["ssh-ed25519"]),
            try FakeHostKey.plain("\(directory)/ec", algorithms: ["ecdsa-sha2-nistp256"]),
        ], addresses: ["127.0.0.1"], kexInitAfterClient: true)
        defer { server.stop() }
        let result = HostProbe(host: InventoryHost(name: "late", address: "127.0.0.1", port: server.port), timeout: .seconds(2))
            .run(cancellation: ProbeCancellation())
        let expected = try ["late-cert.pub", "ed.pub", "ec.pub"].map { try KeyFiles.blob(publicKeyFile: "\(directory)/\($0)") }
        XCTAssertEqual(Set(result.keys.map(\.key.blob)), Set(expected), "\(result.failures.map(\.message.value)) \(server.log)")
        XCTAssertTrue(result.keys.contains { $0.key.isCertificate }, "the one-by-one path fetches the certificate too")
        XCTAssertEqual(result.serverHostKeyAlgorithms.map(Set.init),
                       ["ssh-ed25519-cert-v01@openssh.com", "ssh-ed25519", "ecdsa-sha2-nistp256"])
    }
}
