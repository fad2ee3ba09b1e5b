import Foundation
import XCTest
import Synchronization
@testable import FleetTrustSSH
import FleetTrustCore
import FleetTrustTestFleet

/// The paths of a host's probe that the first round does not take: libssh for a server only it
/// can negotiate with, and the up-front certificates-first offer for a server that sends its
/// KEXINIT only after the client's.
final class LibsshFallbackTests: XCTestCase {
    /// A real sshd whose only key exchange is `diffie-hellman-group14-sha1`, for a host whose
    /// `KexAlgorithms +diffie-hellman-group14-sha1` lets `ssh` reach it: every key is proved by a
    /// completed exchange, and the key `ssh` meets by our own client's connection shaped like `ssh`'s.
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
        guard case .proved(let met)? = result.sshConnection else { return XCTFail("\(String(describing: result.sshConnection))") }
        XCTAssertEqual(met.algorithms?.keyExchange, "diffie-hellman-group14-sha1")
    }

    /// The other SHA-1 methods a host may enable are our client's too: a real sshd offering only
    /// one of them proves its key to the connection shaped like `ssh`'s.
    func testOurClientSpeaksEverySHA1MethodARealSSHDOffers() throws {
        for method in ["diffie-hellman-group1-sha1", "diffie-hellman-group-exchange-sha1"] {
            let sshd = try KeyExchangeTestSSHD(keys: [.init(type: "ed25519", bits: "256")], extraConfig: ["KexAlgorithms \(method)"])
            defer { sshd.stop() }
            var host = InventoryHost(name: "old-switch", address: "127.0.0.1", port: sshd.port)
            host.sshOptions.kexAlgorithms = SSHAlgorithmList("+\(method)")
            let result = HostProbe(host: host, timeout: .seconds(5)).run(cancellation: ProbeCancellation())
            guard case .proved(let met)? = result.sshConnection else {
                XCTFail("\(method): \(String(describing: result.sshConnection))")
                continue
            }
            XCTAssertEqual(met.key.fingerprint, try sshd.publicKey(0).fingerprint, method)
            XCTAssertEqual(met.algorithms?.keyExchange, method)
        }
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
        // sshd closes as soon as it has refused; when its close reaches libssh in the same wake-up
        // as its KEXINIT (a loaded machine), libssh reports the closed socket instead of its
        // refusal (about 1 in 8 runs with both cores busy). Up to three tries; a refusal that
        // never names the list still fails.
        var refused = AttemptOutcome()
        for _ in 0..<3 {
            refused = HostKeyProbe(endpoint: endpoint, port: sshd.port, hostKeyAlgorithms: "ssh-ed25519", timeout: .seconds(5),
                                   keyExchange: KeyExchangeAlgorithms.offered("+diffie-hellman-group14-sha1"))
                .run(cancellation: ProbeCancellation())
            if refused.serverHostKeyAlgorithms != nil { break }
        }
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

    /// A server that speaks only after the client's identification, and breaks the key exchange
    /// (a malformed reply): ours, which sends `ssh`'s identification at once, is answered, libssh
    /// (which waits for the server to speak first) is not. The
    /// host's failure is what ours reached, the key exchange, not libssh's identification
    /// timeout, which would say the server never answered.
    func testLibsshFailingEarlierThanOurClientKeepsTheFailureOurClientReached() throws {
        let heard = Mutex<[String]>([])
        let server = try ScriptedServer { client in
            let line = Self.identificationLine(client)
            heard.withLock { $0.append(line) }
            guard line.hasPrefix("SSH-2.0-OpenSSH_") else { return ScriptedServer.drain(client) }
            ScriptedServer.send(client, Array("SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n".utf8)
                + ScriptedServer.packet(Self.kexInit(kex: "curve25519-sha256", hostKey: "ssh-ed25519"))
                + ScriptedServer.packet([KeyExchangeMessage.ecdhReply, 0, 0, 0, 1, 0]))
            ScriptedServer.drain(client)
        }
        defer { server.close() }
        let result = HostProbe(host: InventoryHost(name: "answers-ours-only", address: "127.0.0.1", port: server.port),
                               timeout: .seconds(1)).run(cancellation: ProbeCancellation())
        XCTAssertTrue(result.keys.isEmpty)
        XCTAssertEqual(result.failures.map(\.stage), [.keyExchange], "\(result.failures.map(\.message.value))")
        XCTAssertEqual(result.failures.first?.code, .kexFailed)
        XCTAssertEqual(result.serverVersion, "SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3")
        // Measured: libssh 0.10.6 waits for the server's identification before it sends its own
        // (ours, like `ssh`, sends at once), so a server that waits to hear the client first
        // stalls libssh alone; its timeout must not be what the host is reported with.
        server.close()
        XCTAssertTrue(heard.withLock { $0 }.contains(""), "libssh said nothing before the server: \(heard.withLock { $0 })")
    }

    /// The client's identification line (bounded), as a server reads it before answering.
    private static func identificationLine(_ client: Int32) -> String {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count < 255, recv(client, &byte, 1, 0) == 1, byte != 0x0a { line.append(byte) }
        return String(decoding: line, as: UTF8.self)
    }

    /// A KEXINIT payload offering one key exchange and one host-key algorithm.
    private static func kexInit(kex: String, hostKey: String) -> [UInt8] {
        var payload: [UInt8] = [20] + [UInt8](repeating: 7, count: 16)
        for list in [kex, hostKey, "aes128-ctr", "aes128-ctr", "hmac-sha2-256", "hmac-sha2-256", "none", "none", "", ""] {
            payload += withUnsafeBytes(of: UInt32(list.utf8.count).bigEndian, Array.init) + Array(list.utf8)
        }
        return payload + [0, 0, 0, 0, 0]
    }
}
