import Foundation
import Glibc
import Synchronization
import XCTest
@testable import FleetTrustSSH
import FleetTrustCore
import FleetTrustTestFleet

/// Our client looks like the local `ssh` on the wire: the same identification string and the
/// same KEXINIT lists (ciphers, MACs, compression, the host-key list when we offer what `ssh`
/// offers, and the key exchange methods, of which only the costly post-quantum hybrid moves
/// last), so a server or a man in the middle that tells clients apart by what they send shows us
/// what it shows `ssh`. The real `ssh` is the oracle: both connect to one recording server.
final class ClientOfferOnTheWireTests: XCTestCase {
    /// What a client sent before the server's KEXINIT: its identification line and its KEXINIT.
    struct Opening: Sendable {
        var identification: String
        var lists: [[String]]
    }

    /// The openings a server recorded, in order of arrival.
    final class Openings: Sendable {
        let recorded = Mutex<[Opening]>([])
        var first: Opening? { recorded.withLock { $0.first } }
        var second: Opening? { recorded.withLock { $0.count == 2 ? $0[1] : nil } }
    }

    /// A server that identifies as OpenSSH 9.2, records each client's opening, and hangs up.
    private func recordingServer(into openings: Openings) throws -> ScriptedServer {
        try ScriptedServer { client in
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let greeting = Array("SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n".utf8)
            guard write(client, greeting, greeting.count) == greeting.count else { return }
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while received.count < 65_536 {
                if let opening = Self.opening(received) {
                    openings.recorded.withLock { $0.append(opening) }
                    return
                }
                let count = read(client, &chunk, chunk.count)
                guard count > 0 else { return }
                received += chunk[0..<count]
            }
        }
    }

    /// The identification line and the KEXINIT that follows it, once both have arrived.
    static func opening(_ bytes: [UInt8]) -> Opening? {
        guard let newline = bytes.firstIndex(of: 0x0a) else { return nil }
        let packet = Array(bytes[(newline + 1)...])
        guard packet.count >= 5 else { return nil }
        let length = packet[0..<4].reduce(0) { $0 << 8 | Int($1) }
        guard packet.count >= 4 + length, length > Int(packet[4]) else { return nil }
        let payload = Array(packet[5..<(4 + length - Int(packet[4]))])
        guard let kexInit = try? KexInit(parsing: payload) else { return nil }
        let line = String(decoding: bytes[..<newline], as: UTF8.self)
        return Opening(identification: line.hasSuffix("\r") ? String(line.dropLast()) : line, lists: kexInit.lists)
    }

    /// `ssh`'s key exchange list with the post-quantum hybrid moved after the other methods, before the markers.
    static func hybridLast(_ list: [String]) -> [String] {
        let markers = list.filter { $0.hasPrefix("ext-info-") || $0.hasPrefix("kex-strict-") }
        let methods = list.filter { !markers.contains($0) }
        let hybrid = methods.filter { $0.hasPrefix("sntrup761x25519-") }
        return methods.filter { !hybrid.contains($0) } + hybrid + markers
    }

    func testOurIdentificationAndKexInitAreTheLocalSSHsOwn() throws {
        let openings = Openings()
        let server = try recordingServer(into: openings)
        defer { server.close() }
        let ssh = try ProgramRun.run("/usr/bin/ssh", ["-F", "/dev/null", "-o", "StrictHostKeyChecking=yes",
                                                      "-o", "UserKnownHostsFile=/dev/null", "-o", "GlobalKnownHostsFile=/dev/null",
                                                      "-o", "BatchMode=yes", "-p", String(server.port), "127.0.0.1", "true"], limit: 20)
        let sshOpening = try XCTUnwrap(openings.first, "ssh sent no KEXINIT: \(ssh.stderrText)")
        _ = KeyExchangeProbe.run(host: "127.0.0.1", port: server.port, hostKeyAlgorithms: HostKeyAlgorithms.openSSHDefault, timeout: 5)
        let ours = try XCTUnwrap(openings.second, "our client sent no KEXINIT")
        XCTAssertTrue(sshOpening.identification.hasPrefix("SSH-2.0-OpenSSH_"), sshOpening.identification)
        XCTAssertEqual(ours.identification, sshOpening.identification)
        let kex = KexInit.List.keyExchange.rawValue
        XCTAssertEqual(Array(ours.lists[(kex + 1)...]), Array(sshOpening.lists[(kex + 1)...]), "every other name-list, in ssh's order")
        XCTAssertEqual(ours.lists[kex], Self.hybridLast(sshOpening.lists[kex]))
    }

    func testAKexAlgorithmsSettingShapesOurOfferAsItShapesSSHs() throws {
        let openings = Openings()
        let server = try recordingServer(into: openings)
        defer { server.close() }
        let setting = "-sntrup761x25519-sha512*,ecdh-*"
        _ = try ProgramRun.run("/usr/bin/ssh", ["-F", "/dev/null", "-o", "KexAlgorithms=\(setting)", "-o", "BatchMode=yes",
                                                "-o", "UserKnownHostsFile=/dev/null", "-p", String(server.port), "127.0.0.1", "true"],
                               limit: 20)
        let sshOpening = try XCTUnwrap(openings.first)
        _ = KeyExchangeProbe.run(host: "127.0.0.1", port: server.port, hostKeyAlgorithms: ["ssh-ed25519"], timeout: 5,
                                 keyExchange: KeyExchangeAlgorithms.offered(SSHAlgorithmList(setting)))
        let ours = try XCTUnwrap(openings.second)
        XCTAssertEqual(ours.lists[KexInit.List.keyExchange.rawValue], Self.hybridLast(sshOpening.lists[KexInit.List.keyExchange.rawValue]))
        XCTAssertEqual(ClientIdentification.version(fromVersionOutput: "OpenSSH_9.2p1 Debian-2+deb12u3, OpenSSL 3.0.11 19 Sep 2023\n"),
                       "OpenSSH_9.2p1 Debian-2+deb12u3")
        XCTAssertNil(ClientIdentification.version(fromVersionOutput: "ssh: command not found"))
        XCTAssertNil(ClientIdentification.version(fromVersionOutput: "OpenSSH_9.2p1\u{7}bell, x"))
    }

    /// A man in the middle that routes by the client's identification line: an OpenSSH client to
    /// `openSSHPort`, any other client to `otherPort`.
    private func identificationRouter(openSSHPort: Int, otherPort: Int) throws -> ScriptedServer {
        try ScriptedServer { client in
            var line: [UInt8] = []
            var byte: UInt8 = 0
            while line.count < 256, read(client, &byte, 1) == 1 {
                line.append(byte)
                if byte == 0x0a { break }
            }
            guard line.last == 0x0a else { return }
            let port = line.starts(with: Array("SSH-2.0-OpenSSH_".utf8)) ? openSSHPort : otherPort
            guard let backend = Loopback.connectedSocket(port: port) else { return }
            defer { Glibc.close(backend) }
            guard write(backend, line, line.count) == line.count else { return }
            Self.relay(client, backend)
        }
    }

    /// Copies bytes both ways until either side closes or both are quiet for 10 s.
    static func relay(_ first: Int32, _ second: Int32) {
        var sides = [pollfd(fd: first, events: Int16(POLLIN), revents: 0), pollfd(fd: second, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while poll(&sides, 2, 10_000) > 0 {
            for index in 0..<2 where sides[index].revents != 0 {
                let count = read(sides[index].fd, &buffer, buffer.count)
                guard count > 0, write(sides[1 - index].fd, buffer, count) == count else { return }
            }
        }
    }

    /// Two real sshd behind a relay that sends OpenSSH clients to a rogue one: `ssh` says CHANGED
    /// (known_hosts records the real server's key), and the probe meets the rogue server too, so
    /// the key it proves is the one `ssh` met.
    func testARelayRoutingByIdentificationSendsUsWhereItSendsSSH() throws {
        let real = try KeyExchangeTestSSHD(keys: [.init(type: "ed25519", bits: "256")])
        defer { real.stop() }
        let rogue = try KeyExchangeTestSSHD(keys: [.init(type: "ed25519", bits: "256")])
        defer { rogue.stop() }
        let relay = try identificationRouter(openSSHPort: rogue.port, otherPort: real.port)
        defer { relay.close() }
        let knownHosts = FileManager.default.temporaryDirectory.appendingPathComponent("relay-known-hosts-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: knownHosts) }
        try "[127.0.0.1]:\(relay.port) \(try real.publicKey(0).openSSHLine)\n".write(toFile: knownHosts, atomically: true, encoding: .utf8)

        let ssh = try SSHOracle.check(name: "127.0.0.1", port: relay.port, knownHosts: knownHosts)
        XCTAssertEqual(ssh.verdict, .changed, ssh.transcript)
        let result = HostProbe(host: InventoryHost(name: "relayed", address: "127.0.0.1", port: relay.port), timeout: .seconds(5))
            .run(cancellation: ProbeCancellation())
        XCTAssertEqual(Set(result.keys.map(\.key.fingerprint)), [try rogue.publicKey(0).fingerprint],
                       "\(result.failures.map(\.message.value))")
    }
}
