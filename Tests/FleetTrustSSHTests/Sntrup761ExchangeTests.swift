import Foundation
import Glibc
import Synchronization
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

    /// Debian's sshd 9.2 also knows the method by its later standard name, without
    /// `@openssh.com`; a server configured with only that name is met by the same exchange.
    func testAServerConfiguredWithTheStandardNameIsMetToo() throws {
        let sshd = try KeyExchangeTestSSHD(keys: [.init(type: "ed25519", bits: "256", certificateCA: nil)],
                                           extraConfig: ["KexAlgorithms sntrup761x25519-sha512"])
        defer { sshd.stop() }
        let report = KeyExchangeProbe.run(host: "127.0.0.1", port: sshd.port, hostKeyAlgorithms: ["ssh-ed25519"], timeout: 20)
        let found = try report.outcome.get()
        XCTAssertEqual(found.key, try sshd.publicKey(0))
        XCTAssertEqual(found.algorithms?.keyExchange, "sntrup761x25519-sha512")
    }

    /// New ciphertexts each time: a rare slip (a decryption of the wrong weight, a carry in the
    /// encoding) would show as one exchange among several failing.
    /// On both kernel paths: the portable one decapsulates (and makes key pairs once the pool
    /// runs dry) with the portable arithmetic.
    func testRepeatedExchangesAllVerify() throws {
        let sshd = try server()
        let expected = try sshd.publicKey(0)
        try onEachSntrup761Path { path in
            for attempt in 0..<4 {
                let report = KeyExchangeProbe.run(host: "127.0.0.1", port: sshd.port, hostKeyAlgorithms: ["ssh-ed25519"], timeout: 20)
                XCTAssertEqual(try report.outcome.get().key, expected, "attempt \(attempt), \(path)")
            }
        }
    }

    /// Each sntrup761 key pair serves at most `EphemeralKeyLifetime.exchangesPerPair` exchanges,
    /// then a new one does, and every exchange with a reused key pair still proves the key: our
    /// client's value in each exchange as a relay in front of the real sshd sees it on the wire.
    func testEachKeyPairServesABoundedRunOfExchangesAgainstARealServer() throws {
        let sshd = try server()
        let expected = try sshd.publicKey(0)
        let values = Mutex<[[UInt8]]>([])
        let sshdPort = sshd.port
        let relay = try ScriptedServer { client in
            guard let backend = Loopback.connectedSocket(port: sshdPort) else { return }
            defer { Glibc.close(backend) }
            var sent: [UInt8] = []
            var recorded = false
            ClientOfferOnTheWireTests.relay(client, backend) { chunk in
                sent += chunk
                if !recorded, let value = Self.clientValue(sent) {
                    recorded = true
                    values.withLock { $0.append(value) }
                }
            }
        }
        defer { relay.close() }
        let uses = EphemeralKeyLifetime.exchangesPerPair
        for attempt in 0..<(2 * uses + 2) {
            let report = KeyExchangeProbe.run(host: "127.0.0.1", port: relay.port, hostKeyAlgorithms: ["ssh-ed25519"], timeout: 20)
            XCTAssertEqual(try report.outcome.get().key, expected, "attempt \(attempt)")
        }
        let sntrupValues = values.withLock { $0 }.map { Array($0.prefix(Sntrup761.publicKeyBytes)) }
        XCTAssertEqual(sntrupValues.count, 2 * uses + 2)
        assertKeyPairRuns(sntrupValues, bound: uses)
    }

    /// Q_C from the client's side of an exchange: its identification line, then unencrypted
    /// packets up to SSH_MSG_KEX_ECDH_INIT; nil until that has arrived whole.
    private static func clientValue(_ bytes: [UInt8]) -> [UInt8]? {
        guard let newline = bytes.firstIndex(of: 0x0a) else { return nil }
        var offset = newline + 1
        func uint32(at index: Int) -> Int { bytes[index..<(index + 4)].reduce(0) { $0 << 8 | Int($1) } }
        while offset + 5 <= bytes.count {
            let length = uint32(at: offset)
            guard length > 0, offset + 4 + length <= bytes.count else { return nil }
            let payload = offset + 5
            if bytes[payload] == KeyExchangeMessage.ecdhInit {
                let valueLength = uint32(at: payload + 1)
                return Array(bytes[(payload + 5)..<(payload + 5 + valueLength)])
            }
            offset += 4 + length
        }
        return nil
    }

    /// A hostile server's reply, with the real `ssh` as the oracle on the same server (its
    /// known_hosts holds the key, so `ssh` gets as far as the KEM): a value of the wrong length
    /// and a ciphertext of the right length that was never made for our key are both refused
    /// (`ssh`: "incorrect signature"), never a trap and never a proved key.
    func testAForgedOrMisshapenServerValueIsRefusedAsSshRefusesIt() throws {
        let hostKey = try server().publicKey(0)
        let x25519 = try Curve25519KeyAgreement().publicKey
        let cases: [(name: String, value: [UInt8], code: FailureCode)] = [
            ("one byte short", [UInt8](repeating: 7, count: Sntrup761.ciphertextBytes - 1) + x25519, .kexFailed),
            ("a ciphertext for another key", [UInt8](repeating: 7, count: Sntrup761.ciphertextBytes) + x25519, .badSignature),
        ]
        for (name, value, code) in cases {
            let script = Self.hostileScript(hostKey: hostKey, serverValue: value)
            let server = try ScriptedServer { client in
                ScriptedServer.send(client, script)
                ScriptedServer.drain(client)
            }
            defer { server.close() }
            let ssh = try Self.sshHandshake(port: server.port, hostKey: hostKey)
            XCTAssertEqual(ssh.finding, .incorrectSignature, "\(name): ssh \(ssh.finding) (\(ssh.finalMessage))")
            let ours = KeyExchangeProbe.run(host: "127.0.0.1", port: server.port, hostKeyAlgorithms: ["ssh-ed25519"], timeout: 20)
            guard case .failure(let failure) = ours.outcome else { return XCTFail("\(name): ours proved a key ssh refused") }
            XCTAssertEqual(failure.code, code, "\(name): \(failure.message)")
        }
    }

    /// Identification, a KEXINIT allowing only the hybrid method, and at once the reply.
    private static func hostileScript(hostKey: HostKey, serverValue: [UInt8]) -> [UInt8] {
        var kexInit = SSHWireWriter()
        kexInit.writeByte(20)
        kexInit.writeRaw([UInt8](repeating: 1, count: 16))
        for list in [method, "ssh-ed25519", "aes128-ctr", "aes128-ctr", "hmac-sha2-256", "hmac-sha2-256", "none", "none", "", ""] {
            kexInit.writeString(Array(list.utf8))
        }
        kexInit.writeByte(0)
        kexInit.writeUInt32(0)
        var signature = SSHWireWriter()
        signature.writeString(Array("ssh-ed25519".utf8))
        signature.writeString([UInt8](repeating: 0, count: 64))
        var reply = SSHWireWriter()
        reply.writeByte(KeyExchangeMessage.ecdhReply)
        reply.writeString(hostKey.blob)
        reply.writeString(serverValue)
        reply.writeString(signature.bytes)
        return Array("SSH-2.0-Hostile_1.0\r\n".utf8) + ScriptedServer.packet(kexInit.bytes) + ScriptedServer.packet(reply.bytes)
    }

    private static func sshHandshake(port: Int, hostKey: HostKey) throws -> SSHOracle.Handshake {
        let knownHosts = FileManager.default.temporaryDirectory.appendingPathComponent("ft-sntrup-\(getpid())-\(UUID().uuidString)").path
        try "[127.0.0.1]:\(port) \(hostKey.openSSHLine)\n".write(toFile: knownHosts, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: knownHosts) }
        return SSHOracle.classifyHandshake(try SSHOracle.check(name: "127.0.0.1", port: port, knownHosts: knownHosts).transcript)
    }
}
