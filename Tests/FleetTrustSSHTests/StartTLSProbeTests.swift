import FleetTrustCore
import FleetTrustTestFleet
import Foundation
import Glibc
import XCTest
@testable import FleetTrustSSH

/// The STARTTLS probe over real sockets against scripted servers: an SMTP prelude that hands the
/// connection to a real `openssl s_server` (the whole path, upgrade then handshake), and the
/// hostile ones a real server will not play: one that strips the offer, one that floods, one
/// that stalls after its greeting, and a port that never speaks. Each is bounded in time and bytes.
final class StartTLSProbeTests: XCTestCase {
    private var servers: [ScriptedServer] = []

    override func tearDown() {
        servers.forEach { $0.close() }
        servers = []
    }

    private func serve(_ script: @escaping @Sendable (Int32) -> Void) throws -> Int {
        let server = try ScriptedServer(script)
        servers.append(server)
        return server.port
    }

    private func probe(_ service: StartTLSProtocol, port: Int, timeout: Duration = .seconds(5)) -> (ProbeResult, Duration) {
        var host = InventoryHost(name: TLSEndpoint.rowName(host: "localhost", port: port, startTLS: service), address: "127.0.0.1", port: port)
        host.endpoint = .tls(TLSEndpoint(serverName: "localhost", startTLS: service))
        let start = ContinuousClock.now
        let result = TLSProbe(host: host, timeout: timeout)!.run(cancellation: ProbeCancellation())
        return (result, ContinuousClock.now - start)
    }

    /// An SMTP server's side of the upgrade: greeting, STARTTLS offered, 220 to STARTTLS; false
    /// when the client says something else.
    private static func acceptSMTPUpgrade(_ client: Int32) -> Bool {
        ScriptedServer.send(client, Array("220 relay.test ESMTP\r\n".utf8))
        guard line(client)?.hasPrefix("EHLO ") == true else { return false }
        ScriptedServer.send(client, Array("250-relay.test\r\n250 STARTTLS\r\n".utf8))
        guard line(client) == "STARTTLS" else { return false }
        ScriptedServer.send(client, Array("220 2.0.0 Ready to start TLS\r\n".utf8))
        return true
    }

    func testAnSMTPUpgradeLeadsIntoTheRealHandshakeAndRecordsTheChain() throws {
        let lab = try TLSTestLab()
        defer { lab.stop() }
        try lab.key("leaf")
        try lab.selfSigned("leaf", key: "leaf", subject: "localhost", dnsNames: ["localhost"])
        let tlsPort = try lab.serve(certificate: "leaf", key: "leaf")
        let port = try serve { client in
            guard StartTLSProbeTests.acceptSMTPUpgrade(client) else { return }
            StartTLSProbeTests.relay(client, to: tlsPort)
        }
        let (result, _) = probe(.smtp, port: port)
        XCTAssertEqual(result.failures, [])
        let handshake = try XCTUnwrap(result.tls, "no handshake after the upgrade")
        XCTAssertEqual(handshake.serverName, "localhost")
        XCTAssertEqual(handshake.chain.count, 1)
    }

    func testAServerThatDoesNotOfferSTARTTLSIsAnErrorAndIsNeverAskedForIt() throws {
        let heard = Heard()
        let port = try serve { client in
            ScriptedServer.send(client, Array("220 relay.test ESMTP\r\n".utf8))
            while let line = StartTLSProbeTests.line(client) {
                heard.append(line)
                ScriptedServer.send(client, Array("250-relay.test\r\n250 PIPELINING\r\n".utf8))
            }
        }
        let (result, _) = probe(.smtp, port: port)
        XCTAssertEqual(result.failures.map(\.code), [.startTLSNotOffered])
        XCTAssertEqual(result.failures.first.map(FleetJudge.failureStatus), .error)
        XCTAssertNil(result.tls)
        XCTAssertEqual(heard.lines, ["EHLO mail.example.com"])
    }

    func testAFloodingServerIsCutOffByBytesLongBeforeTheTimeout() throws {
        let port = try serve { client in
            ScriptedServer.send(client, Array("220 relay.test ESMTP\r\n".utf8))
            _ = StartTLSProbeTests.line(client)
            let chunk = [UInt8](String(repeating: "250-PIPELINING\r\n", count: 256).utf8)
            while ScriptedServer.send(client, chunk) {}
        }
        let (result, elapsed) = probe(.smtp, port: port, timeout: .seconds(20))
        XCTAssertEqual(result.failures.map(\.code), [.startTLSFailed])
        XCTAssertTrue(result.failures.first?.message.value.contains("more than 64 KiB") == true, "\(result.failures)")
        XCTAssertLessThan(elapsed, .seconds(10))
    }

    func testAServerThatStallsAfterItsGreetingTimesOutAndASilentPortIsUnreachable() throws {
        let port = try serve { client in
            ScriptedServer.send(client, Array("* OK IMAP ready\r\n".utf8))
            ScriptedServer.drain(client)
        }
        let (stalled, elapsed) = probe(.imap, port: port, timeout: .seconds(1))
        XCTAssertEqual(stalled.failures.map(\.code), [.startTLSTimeout])
        XCTAssertEqual(stalled.failures.first.map(FleetJudge.failureStatus), .error)
        XCTAssertLessThan(elapsed, .seconds(4))

        let silent = try SilentListener()
        defer { silent.close() }
        let (unanswered, _) = probe(.postgres, port: silent.port, timeout: .seconds(1))
        XCTAssertEqual(unanswered.failures.map(\.code), [.tlsTimeout])
        XCTAssertEqual(unanswered.failures.first.map(FleetJudge.failureStatus), .unreachable)
    }

    func testAServerThatAcceptsTheUpgradeAndNeverHandshakesIsAnErrorNotASilentPort() throws {
        let port = try serve { client in
            guard StartTLSProbeTests.acceptSMTPUpgrade(client) else { return }
            ScriptedServer.drain(client)
        }
        let (stalled, elapsed) = probe(.smtp, port: port, timeout: .seconds(1))
        XCTAssertEqual(stalled.failures.map(\.code), [.startTLSTimeout])
        XCTAssertEqual(stalled.failures.map(\.stage), [.tlsHandshake])
        XCTAssertEqual(stalled.failures.first.map(FleetJudge.failureStatus), .error)
        XCTAssertLessThan(elapsed, .seconds(4))
    }

    func testACancelWakesAProbeWaitingOnAStalledPreludeAtOnce() throws {
        let heard = Heard()
        let port = try serve { client in
            ScriptedServer.send(client, Array("220 relay.test ESMTP\r\n".utf8))
            if let line = StartTLSProbeTests.line(client) { heard.append(line) }
            ScriptedServer.drain(client)
        }
        var host = InventoryHost(name: TLSEndpoint.rowName(host: "localhost", port: port, startTLS: .smtp), address: "127.0.0.1", port: port)
        host.endpoint = .tls(TLSEndpoint(serverName: "localhost", startTLS: .smtp))
        let cancellation = ProbeCancellation()
        let finished = DispatchSemaphore(value: 0)
        let outcome = Heard()
        Thread.detachNewThread { [host] in
            let result = TLSProbe(host: host, timeout: .seconds(60))!.run(cancellation: cancellation)
            outcome.append(result.failures.map(\.code.rawValue).joined(separator: ","))
            finished.signal()
        }
        // The server has the EHLO: the probe is waiting for its answer, which never comes.
        let deadline = Date().addingTimeInterval(20)
        while heard.lines.isEmpty && Date() < deadline { usleep(10_000) }
        XCTAssertEqual(heard.lines, ["EHLO mail.example.com"])
        let cancelled = ContinuousClock.now
        cancellation.cancel()
        XCTAssertEqual(finished.wait(timeout: .now() + 5), .success, "the cancel did not wake the prelude")
        XCTAssertLessThan(ContinuousClock.now - cancelled, .seconds(5))
        XCTAssertEqual(outcome.lines, [FailureCode.cancelled.rawValue])
    }

    // MARK: What the scripts use

    /// One line from the client, without its line end; nil once it is gone.
    private static func line(_ fd: Int32) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while recv(fd, &byte, 1, 0) == 1 {
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes.last == 13 ? bytes.dropLast() : bytes[...], as: UTF8.self) }
            bytes.append(byte)
        }
        return nil
    }

    /// Copies bytes both ways between the client and a server on `port` until either side ends.
    private static func relay(_ client: Int32, to port: Int) {
        guard let server = Loopback.connectedSocket(port: port) else { return }
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            pump(server, client)
            done.signal()
        }
        pump(client, server)
        done.wait()
        close(server)
    }

    private static func pump(_ from: Int32, _ to: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while case let count = recv(from, &buffer, buffer.count, 0), count > 0, ScriptedServer.send(to, Array(buffer[..<count])) {}
        shutdown(from, Int32(SHUT_RDWR))
        shutdown(to, Int32(SHUT_RDWR))
    }

    /// Lines a script heard, read after the probe.
    private final class Heard: @unchecked Sendable {
        private let lock = NSLock()
        private var kept: [String] = []
        var lines: [String] { lock.withLock { kept } }
        func append(_ line: String) { lock.withLock { kept.append(line) } }
    }
}
