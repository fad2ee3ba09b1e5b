import Foundation
import Glibc
import Synchronization
import XCTest
@testable import FleetTrustSSH
import FleetTrustCore
import FleetTrustTestFleet

/// Our client looks like the local `ssh` on the wire: the connection shaped like `ssh`'s sends
/// `ssh`'s KEXINIT packet byte for byte (but for the cookie), for the host's known_hosts lines and
/// settings, once the server's identification is read; the per-type connections send the same
/// identification and the same lists but for the key exchange list, where the costly post-quantum
/// hybrid moves last. The real `ssh` is the oracle: both connect to one recording server.
final class ClientOfferOnTheWireTests: XCTestCase {
    /// What a client sent before the server's KEXINIT: its identification line and its KEXINIT.
    struct Opening: Sendable {
        var identification: String
        var lists: [[String]]
        /// The KEXINIT packet as framed (length, padding length, payload, padding), cookie zeroed.
        var packet: [UInt8]
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
        var framed = Array(packet[0..<(4 + length)])
        framed.replaceSubrange(6..<22, with: [UInt8](repeating: 0, count: 16))
        return Opening(identification: line.hasSuffix("\r") ? String(line.dropLast()) : line, lists: kexInit.lists, packet: framed)
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

    /// The opening of our connection shaped like `ssh`'s, offering `hostKeys` and `keyExchange`.
    private func sshShapedOpening(port: Int, hostKeys: [String], keyExchange: [String] = KeyExchangeAlgorithms.openSSHDefault,
                                  ciphers: [String] = TransportAlgorithms.openSSHDefaultCiphers,
                                  macs: [String] = TransportAlgorithms.openSSHDefaultMACs, into openings: Openings) throws -> Opening {
        let fd = try XCTUnwrap(Loopback.connectedSocket(port: port))
        defer { Glibc.close(fd) }
        _ = KeyExchangeProbe.run(fd: fd, host: "127.0.0.1", timeout: 5, keyExchange: keyExchange,
                                 offer: .likeSSH(hostKeys, ciphers: ciphers, macs: macs))
        return try XCTUnwrap(openings.second, "the ssh-shaped connection sent no KEXINIT after the server's identification")
    }

    /// `ssh`'s opening against a fresh recording server, with `options`, and ours with what the
    /// probe offers for the same host and settings (`ours` gets the server's port).
    private func compareWithSSH(_ options: [String], before: (Int) throws -> Void = { _ in },
                                ours: (Int, Openings) throws -> Opening) throws -> (ssh: Opening, ours: Opening) {
        let openings = Openings()
        let server = try recordingServer(into: openings)
        defer { server.close() }
        try before(server.port)
        let ssh = try ProgramRun.run("/usr/bin/ssh", ["-F", "/dev/null"] + options + ["-o", "StrictHostKeyChecking=yes",
                                                      "-o", "GlobalKnownHostsFile=/dev/null", "-o", "BatchMode=yes",
                                                      "-p", String(server.port), "127.0.0.1", "true"], limit: 20)
        let sshOpening = try XCTUnwrap(openings.first, "ssh sent no KEXINIT: \(ssh.stderrText)")
        return (sshOpening, try ours(server.port, openings))
    }

    func testTheSSHShapedConnectionSendsSSHsKexInitPacketByteForByte() throws {
        let (ssh, ours) = try compareWithSSH(["-o", "UserKnownHostsFile=/dev/null"]) { port, openings in
            try sshShapedOpening(port: port, hostKeys: try HostKeyAlgorithms.offered(nil, recorded: []), into: openings)
        }
        XCTAssertEqual(ssh.lists[KexInit.List.keyExchange.rawValue].first, "sntrup761x25519-sha512", "ssh 9.2 lists the hybrid first")
        XCTAssertEqual(ours.identification, ssh.identification)
        XCTAssertEqual(ours.lists, ssh.lists)
        XCTAssertEqual(ours.packet, ssh.packet, "the same packet: lengths, lists, guess flag, reserved word, zeroed padding")
    }

    /// `order_hostkeyalgs`: known_hosts records only an RSA key for the host, so `ssh` offers
    /// RSA first; the probe, given the judge's order for the host, offers the same.
    func testTheSSHShapedConnectionOrdersHostKeysByKnownHostsAsSSHDoes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ssh-shape-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyPath = directory.appendingPathComponent("rsa").path
        _ = try ProgramRun.run("/usr/bin/ssh-keygen", ["-q", "-t", "rsa", "-b", "2048", "-N", "", "-f", keyPath], limit: 20)
        let publicKey = try String(contentsOfFile: keyPath + ".pub", encoding: .utf8).split(separator: " ").prefix(2).joined(separator: " ")
        let knownHosts = directory.appendingPathComponent("known_hosts").path
        var offered: [String] = []
        let (ssh, ours) = try compareWithSSH(["-o", "UserKnownHostsFile=\(knownHosts)"], before: { port in
            try "[127.0.0.1]:\(port) \(publicKey)\n".write(toFile: knownHosts, atomically: true, encoding: .utf8)
        }) { port, openings in
            let judge = FleetJudge(knownHosts: try KnownHosts.read(paths: [knownHosts]), pins: nil)
            offered = try XCTUnwrap(judge.sshHostKeyAlgorithms(for: InventoryHost(name: "127.0.0.1", address: "127.0.0.1", port: port)))
            return try sshShapedOpening(port: port, hostKeys: offered, into: openings)
        }
        XCTAssertEqual(offered.first, "rsa-sha2-512-cert-v01@openssh.com", "known_hosts moves RSA (and its certificates) first")
        XCTAssertEqual(ours.lists, ssh.lists)
        XCTAssertEqual(ours.packet, ssh.packet)
    }

    func testTheSSHShapedConnectionAppliesKexAlgorithmsAsSSHDoes() throws {
        let setting = "-sntrup761x25519-sha512*,ecdh-*"
        for setting in [setting, "+diffie-hellman-group14-sha1,diffie-hellman-group1-sha1"] {
            let (ssh, ours) = try compareWithSSH(["-o", "KexAlgorithms=\(setting)", "-o", "UserKnownHostsFile=/dev/null"]) { port, openings in
                try sshShapedOpening(port: port, hostKeys: try HostKeyAlgorithms.offered(nil, recorded: []),
                                     keyExchange: KeyExchangeAlgorithms.offered(SSHAlgorithmList(setting)), into: openings)
            }
            XCTAssertEqual(ours.packet, ssh.packet, setting)
        }
    }

    func testTheSSHShapedConnectionAppliesCiphersAndMACsAsSSHDoes() throws {
        for (ciphers, macs) in [("aes256-gcm@openssh.com,aes256-ctr", "hmac-sha2-512-etm@openssh.com"), ("-chacha*", "^hmac-sha1-96")] {
            let (ssh, ours) = try compareWithSSH(["-o", "Ciphers=\(ciphers)", "-o", "MACs=\(macs)", "-o", "UserKnownHostsFile=/dev/null"]) { port, openings in
                try sshShapedOpening(port: port, hostKeys: try HostKeyAlgorithms.offered(nil, recorded: []),
                                     ciphers: TransportAlgorithms.ciphers(SSHAlgorithmList(ciphers)),
                                     macs: TransportAlgorithms.macs(SSHAlgorithmList(macs)), into: openings)
            }
            XCTAssertEqual(ours.lists, ssh.lists, ciphers)
            XCTAssertEqual(ours.packet, ssh.packet, ciphers)
        }
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
    /// `fromFirst` sees each chunk from `first` before it is passed on.
    static func relay(_ first: Int32, _ second: Int32, fromFirst: (ArraySlice<UInt8>) -> Void = { _ in }) {
        var sides = [pollfd(fd: first, events: Int16(POLLIN), revents: 0), pollfd(fd: second, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while poll(&sides, 2, 10_000) > 0 {
            for index in 0..<2 where sides[index].revents != 0 {
                let count = read(sides[index].fd, &buffer, buffer.count)
                if index == 0, count > 0 { fromFirst(buffer[0..<count]) }
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
