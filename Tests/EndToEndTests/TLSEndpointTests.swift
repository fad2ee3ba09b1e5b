import FleetTrustCore
import FleetTrustTestFleet
import Foundation
import XCTest

/// TLS endpoints against real `openssl s_server`s on loopback, with certificates the `openssl`
/// CLI made: one scan of every case (self-signed, test CA, intermediate chain, expired, not yet
/// valid, wrong name, expiring in 5 days, pinned keys, SNI, an SSH speaker, a silent port), then
/// replays of the recorded chains; and `sync`'s exit status for endpoints it never writes.
final class TLSEndpointTests: XCTestCase {
    private var lab: TLSTestLab!
    private var listeners: [Int32] = []

    override func setUpWithError() throws {
        lab = try TLSTestLab()
    }

    override func tearDown() {
        lab?.stop()
        listeners.forEach { close($0) }
    }

    private struct Ports {
        var selfSigned = 0, ca = 0, chain = 0, expired = 0, notYet = 0, wrongName = 0, soon = 0
        var pinned = 0, rotated = 0, newKey = 0, sni = 0, ssh = 0, silent = 0
    }

    /// Makes every certificate and starts every server.
    private func startServers() throws -> Ports {
        for name in ["root", "intermediate", "leaf", "self", "pinned", "other", "sni"] { try lab.key(name) }
        try lab.selfSigned("root", key: "root", subject: "fleettrust test root", ca: true)
        try lab.signed("intermediate", key: "intermediate", subject: "fleettrust test intermediate", by: "root", ca: true, days: 3000)
        try lab.selfSigned("self", key: "self", subject: "localhost", dnsNames: ["localhost"])
        try lab.signed("ca-leaf", key: "leaf", subject: "localhost", by: "root", dnsNames: ["localhost"])
        try lab.signed("chain-leaf", key: "leaf", subject: "localhost", by: "intermediate", dnsNames: ["localhost"])
        try lab.signed("expired", key: "leaf", subject: "localhost", by: "root", dnsNames: ["localhost"],
                       start: "20200101000000Z", end: "20210101000000Z")
        try lab.signed("not-yet", key: "leaf", subject: "localhost", by: "root", dnsNames: ["localhost"],
                       start: "20900101000000Z", end: "20910101000000Z")
        try lab.signed("wrong-name", key: "leaf", subject: "www.example.org", by: "root", dnsNames: ["www.example.org"])
        try lab.signed("soon", key: "leaf", subject: "localhost", by: "root", dnsNames: ["localhost"], days: 5)
        try lab.selfSigned("pinned", key: "pinned", subject: "bmc", dnsNames: ["localhost"], days: 100)
        try lab.selfSigned("rotated", key: "pinned", subject: "bmc reissued", dnsNames: ["localhost"], days: 200)
        try lab.selfSigned("new-key", key: "other", subject: "bmc", dnsNames: ["localhost"], days: 100)
        try lab.signed("sni-leaf", key: "sni", subject: "console.test", by: "root", dnsNames: ["console.test"])

        var ports = Ports()
        ports.selfSigned = try lab.serve(certificate: "self", key: "self")
        ports.ca = try lab.serve(certificate: "ca-leaf", key: "leaf")
        ports.chain = try lab.serve(certificate: "chain-leaf", key: "leaf", chain: "intermediate")
        ports.expired = try lab.serve(certificate: "expired", key: "leaf")
        ports.notYet = try lab.serve(certificate: "not-yet", key: "leaf")
        ports.wrongName = try lab.serve(certificate: "wrong-name", key: "leaf")
        ports.soon = try lab.serve(certificate: "soon", key: "leaf")
        ports.pinned = try lab.serve(certificate: "pinned", key: "pinned")
        ports.rotated = try lab.serve(certificate: "rotated", key: "pinned")
        ports.newKey = try lab.serve(certificate: "new-key", key: "other")
        ports.sni = try lab.serve(certificate: "ca-leaf", key: "leaf", sni: ("console.test", "sni-leaf", "sni"))
        ports.ssh = try sshSpeaker()
        ports.silent = try silentPort()
        return ports
    }

    /// A port that answers every connection with an SSH identification, as sshd does.
    private func sshSpeaker() throws -> Int {
        let (fd, port) = try Loopback.listeningSocket(backlog: 16)
        listeners.append(fd)
        Thread.detachNewThread {
            while true {
                let client = accept(fd, nil, nil)
                guard client >= 0 else { return }
                _ = "SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n".withCString { write(client, $0, strlen($0)) }
                // The server's behaviour, not a wait: it keeps the connection a moment, as sshd does.
                usleep(300_000)
                close(client)
            }
        }
        return port
    }

    /// A port that accepts connections (the kernel's backlog) and never says anything.
    private func silentPort() throws -> Int {
        let (fd, port) = try Loopback.listeningSocket(backlog: 16)
        listeners.append(fd)
        return port
    }

    private func scan(_ arguments: [String]) throws -> (ProgramRun, RecordedScan) {
        let run = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "json", "--known-hosts", lab.path("known_hosts"),
                                                                "--timeout", "3"] + arguments, limit: 120)
        let report = try XCTUnwrap(try? RecordedScan.decode(Data(run.stdout)), "no JSON: \(run.stderrText)")
        return (run, report)
    }

    func testEveryTLSCaseGetsItsStatusFromOneScanAndReplaysTheSame() throws {
        let ports = try startServers()
        try lab.write("known_hosts", "")
        let plain = [ports.selfSigned, ports.ca, ports.chain, ports.expired, ports.notYet, ports.wrongName, ports.soon,
                     ports.pinned, ports.rotated, ports.newKey, ports.ssh, ports.silent].map { "https://localhost:\($0)" }
        try lab.write("endpoints", plain.joined(separator: "\n") + "\ntls://127.0.0.1:\(ports.ca)\n")
        // fleettrust_tls_ports: the inventory name is the SNI, the address is where to connect.
        try lab.write("hosts.ini", """
            [consoles]
            console.test ansible_host=127.0.0.1 fleettrust_tls_ports=\(ports.sni)
            [consoles:vars]
            ansible_port=1

            """)
        let pin = try lab.spkiPin("pinned")
        let rootPin = try lab.spkiPin("root")
        let pinnedEndpoints = [ports.pinned, ports.rotated, ports.newKey].map { "[localhost]:\($0)" }.joined(separator: ",")
        try lab.write("pins", "\(pinnedEndpoints) pin-sha256:\(pin)\n[localhost]:\(ports.chain) pin-sha256:\(rootPin)\n")
        try lab.write("policy", "\(pinnedEndpoints) pin-only\n[localhost]:\(ports.chain) pinned\n")
        let (run, report) = try scan(["--inventory", lab.path("endpoints"), "--inventory", lab.path("hosts.ini"),
                                      "--tls-ca-file", lab.path("root.pem"), "--pins", lab.path("pins"), "--policy", lab.path("policy")])
        func entry(_ name: String) throws -> RecordedScan.Host {
            try XCTUnwrap(report.hosts.first { $0.name == name }, "no row \(name) in \(report.hosts.map(\.name))")
        }
        func status(_ port: Int, host: String = "localhost") throws -> HostStatus { try entry("\(host):\(port)/tls").status }

        XCTAssertEqual(try status(ports.selfSigned), .untrusted)
        XCTAssertEqual(try status(ports.ca), .trusted)
        XCTAssertEqual(try status(ports.ca, host: "127.0.0.1"), .nameMismatch, "the leaf names localhost, not the IP address")
        XCTAssertEqual(try status(ports.chain), .trusted)
        XCTAssertEqual(try entry("localhost:\(ports.chain)/tls").method, "certificate-chain+ca-pin", "the root's pin is a CA pin")
        XCTAssertEqual(try status(ports.expired), .expired)
        XCTAssertEqual(try entry("localhost:\(ports.expired)/tls").warnings, [.expired])
        XCTAssertEqual(try status(ports.notYet), .expired)
        XCTAssertEqual(try entry("localhost:\(ports.notYet)/tls").warnings, [.notYetValid])
        XCTAssertEqual(try status(ports.wrongName), .nameMismatch)
        XCTAssertEqual(try status(ports.soon), .trusted)
        let soon = try entry("localhost:\(ports.soon)/tls")
        XCTAssertEqual(soon.warnings, [.expiresSoon])
        XCTAssertTrue((4...5).contains(soon.expiresInDays?.leaf ?? -1), "\(String(describing: soon.expiresInDays))")
        XCTAssertEqual(try status(ports.pinned), .trusted, "pin-only: the pin alone decides a self-signed endpoint")
        XCTAssertEqual(try status(ports.rotated), .trusted, "a reissued certificate for the same key keeps its pin")
        XCTAssertEqual(try status(ports.newKey), .pinMismatch)
        XCTAssertEqual(try entry("localhost:\(ports.pinned)/tls").certificates?.first?.spkiSHA256, pin,
                       "our SPKI pin is the one the openssl CLI computes")
        let sni = try entry("console.test:\(ports.sni)/tls")
        XCTAssertEqual(sni.status, .trusted, "the SNI name gets its own certificate")
        XCTAssertEqual(sni.tlsSession?.sni, "console.test")
        XCTAssertEqual(sni.certificates?.first?.san, ["DNS:console.test"])
        let ssh = try entry("localhost:\(ports.ssh)/tls")
        XCTAssertEqual(ssh.status, .error)
        XCTAssertEqual(ssh.error?.stage, "tls-handshake")
        XCTAssertEqual(ssh.error?.code, .notTLS)
        XCTAssertEqual(try status(ports.silent), .unreachable)
        XCTAssertEqual(report.hosts.first { $0.name == "console.test" }?.endpointProtocol, .ssh, "SSH rows stay next to TLS rows")
        XCTAssertTrue(report.hosts.allSatisfy { $0.endpointProtocol == ($0.name.hasSuffix("/tls") ? .tls : .ssh) })
        XCTAssertEqual(run.status, 2, "a pin mismatch is exit 2")

        // Replay: the same chains judged again, without the network, against today's files.
        try lab.write("scan.json", run.stdoutText)
        let (_, again) = try scan(["--replay", lab.path("scan.json"), "--tls-ca-file", lab.path("root.pem"),
                                   "--pins", lab.path("pins"), "--policy", lab.path("policy")])
        XCTAssertEqual(again.hosts.map(\.status), report.hosts.map(\.status))
        let (_, systemStore) = try scan(["--replay", lab.path("scan.json")])
        XCTAssertEqual(systemStore.hosts.first { $0.name == "localhost:\(ports.ca)/tls" }?.status, .untrusted,
                       "without --tls-ca-file the test root is not trusted")
        let knownHosts = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--replay", lab.path("scan.json"), "--format", "known-hosts",
                                                                       "--known-hosts", lab.path("known_hosts")])
        XCTAssertEqual(knownHosts.stdoutText, "", "TLS rows never become known_hosts lines")
    }

    /// sync never writes a TLS endpoint but ends as scan does for it, naming the alarm: 2 for one
    /// in alarm (a name mismatch, a pin mismatch), 0 for a trusted one.
    func testSyncExitsAtEachTLSEndpointsOwnLevelAndNamesTheAlarm() throws {
        try lab.rootCA(subject: "fleettrust test root", signing: [("ca-leaf", "leaf", "localhost"), ("wrong-name", "leaf", "www.example.org")])
        let trusted = try lab.serve(certificate: "ca-leaf", key: "leaf")
        let wrongName = try lab.serve(certificate: "wrong-name", key: "leaf")
        let pinned = try lab.serve(certificate: "ca-leaf", key: "leaf")
        try lab.write("known_hosts", "")
        try lab.write("pins", "[localhost]:\(pinned) pin-sha256:" + String(repeating: "A", count: 43) + "=\n")
        let cases: [(port: Int, status: Int32, words: String)] = [
            (trusted, 0, "a TLS endpoint, trusted"), (wrongName, 2, "a TLS endpoint, name-mismatch"), (pinned, 2, "a TLS endpoint, pin-mismatch"),
        ]
        for (port, status, words) in cases {
            try lab.write("endpoint", "tls://localhost:\(port)\n")
            let arguments = ["--inventory", lab.path("endpoint"), "--known-hosts", lab.path("known_hosts"), "--pins", lab.path("pins"),
                             "--tls-ca-file", lab.path("root.pem"), "--timeout", "3", "--no-history"]
            let scan = try ProgramRun.run(BuiltProducts.fleettrust, ["scan"] + arguments, limit: 60)
            let sync = try ProgramRun.run(BuiltProducts.fleettrust, ["sync"] + arguments, limit: 60)
            XCTAssertEqual(scan.status, status, scan.stderrText)
            XCTAssertEqual(sync.status, status, sync.stderrText)
            XCTAssertTrue(sync.stderrText.contains(words), sync.stderrText)
            XCTAssertEqual(try String(contentsOfFile: lab.path("known_hosts"), encoding: .utf8), "", "sync wrote nothing for a TLS endpoint")
        }
    }
}
