import Foundation
import Glibc
import Synchronization
import XCTest
@testable import FleetTrustSSH
import FleetTrustCore
import FleetTrustTestFleet

/// Our client looks like the local `ssh` on the wire: the same identification string and the
/// same KEXINIT lists (key exchange methods, ciphers, MACs, compression, and the host-key list
/// when we offer what `ssh` offers), so a server or a man in the middle that tells clients apart
/// by what they send shows us what it shows `ssh`. The real `ssh` is the oracle: both connect to
/// one recording server.
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
        XCTAssertEqual(ours.lists, sshOpening.lists, "every name-list, in ssh's order")
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
        XCTAssertEqual(ours.lists[KexInit.List.keyExchange.rawValue], sshOpening.lists[KexInit.List.keyExchange.rawValue])
        XCTAssertEqual(ClientIdentification.version(fromVersionOutput: "OpenSSH_9.2p1 Debian-2+deb12u3, OpenSSL 3.0.11 19 Sep 2023\n"),
                       "OpenSSH_9.2p1 Debian-2+deb12u3")
        XCTAssertNil(ClientIdentification.version(fromVersionOutput: "ssh: command not found"))
        XCTAssertNil(ClientIdentification.version(fromVersionOutput: "OpenSSH_9.2p1\u{7}bell, x"))
    }
}
