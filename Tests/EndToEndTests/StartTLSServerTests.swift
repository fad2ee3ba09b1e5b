import FleetTrustCore
import FleetTrustTestFleet
import Foundation
import XCTest

/// STARTTLS endpoints against real servers from Debian packages (Postfix, Dovecot, slapd,
/// PostgreSQL) on loopback, with `openssl s_client -starttls -verify_return_error` as the oracle:
/// one scan of every service, then the same document replayed into JSON, the table, Prometheus
/// and the dashboard (in tmux). Slow-ish (a PostgreSQL cluster is made for it): `make test-integration`.
final class StartTLSServerTests: XCTestCase {
    private var lab: TLSTestLab!
    private var servers: StartTLSServers!
    private var terminal: DashboardTmux?

    override func setUpWithError() throws {
        for tool in ["/usr/lib/postfix/sbin/master", "/usr/sbin/dovecot", "/usr/sbin/slapd", "/usr/lib/postgresql/15/bin/postgres"]
        where !FileManager.default.isExecutableFile(atPath: tool) {
            let message = "\(tool) is missing: apt-get install postfix dovecot-imapd dovecot-pop3d slapd postgresql (make test-integration does)"
            // Where the suite was asked for, a missing server is a failure, never a pass.
            if ProcessInfo.processInfo.environment["FLEETTRUST_INTEGRATION"] != nil {
                XCTFail(message)
                throw CocoaError(.fileNoSuchFile)
            }
            throw XCTSkip(message)
        }
        lab = try TLSTestLab()
        servers = StartTLSServers(lab: lab)
    }

    override func tearDown() {
        terminal?.stop()
        servers?.stop()
        lab?.stop()
    }

    func testEveryRealServerGetsTheVerdictOpenSSLReachesAndReplaysTheSame() throws {
        for name in ["root", "leaf"] { try lab.key(name) }
        try lab.selfSigned("root", key: "root", subject: "fleettrust starttls root", ca: true)
        try lab.signed("leaf", key: "leaf", subject: "localhost", by: "root", dnsNames: ["localhost"])
        try lab.signed("wrong-name", key: "leaf", subject: "ldap.example.org", by: "root", dnsNames: ["ldap.example.org"])

        let postfix = try servers.postfix(certificate: "leaf", key: "leaf")
        let dovecot = try servers.dovecot(certificate: "leaf", key: "leaf")
        let ldapWrongName = try servers.slapd(certificate: "wrong-name", key: "leaf")
        let ldapWithoutTLS = try servers.slapd(certificate: nil, key: nil)
        let postgres = try servers.postgres(certificate: "leaf", key: "leaf")

        // (inventory line, s_client's -starttls name, port, the status fleettrust must give)
        let cases: [(line: String, oracle: String, port: Int, status: HostStatus)] = [
            ("smtp://localhost:\(postfix.offered)", "smtp", postfix.offered, .trusted),
            ("smtp://localhost:\(postfix.stripped)", "smtp", postfix.stripped, .error),
            ("submission://localhost:\(postfix.required)", "smtp", postfix.required, .trusted),
            ("imap://localhost:\(dovecot.imap)", "imap", dovecot.imap, .trusted),
            ("pop3://localhost:\(dovecot.pop3)", "pop3", dovecot.pop3, .trusted),
            ("ldap://localhost:\(ldapWrongName)", "ldap", ldapWrongName, .nameMismatch),
            ("ldap://localhost:\(ldapWithoutTLS)", "ldap", ldapWithoutTLS, .error),
            ("postgres://localhost:\(postgres)", "postgres", postgres, .trusted),
        ]
        try lab.write("endpoints", cases.map(\.line).joined(separator: "\n") + "\n")
        try lab.write("known_hosts", "")
        let scan = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "json", "--inventory", lab.path("endpoints"),
                                                                 "--known-hosts", lab.path("known_hosts"), "--tls-ca-file", lab.path("root.pem"),
                                                                 "--timeout", "10", "--output", lab.path("scan.json")], limit: 120)
        let report = try RecordedScan.decode(Data(contentsOf: URL(fileURLWithPath: lab.path("scan.json"))))
        XCTAssertEqual(scan.status, 2, "a name mismatch is an alarm: \(scan.stderrText)")

        for entry in cases {
            let service = try XCTUnwrap(StartTLSProtocol(inventoryName: entry.line.prefix { $0 != ":" }))
            let name = "localhost:\(entry.port)/\(service.rawValue)"
            let host = try XCTUnwrap(report.hosts.first { $0.name == name }, "no row \(name) in \(report.hosts.map(\.name))")
            XCTAssertEqual(host.status, entry.status, "\(name): \(host.reason) \(host.error.map { "\($0.code) \($0.message)" } ?? "")")
            XCTAssertEqual(host.endpointProtocol, .tls)
            XCTAssertEqual(host.startTLS, service)
            // The oracle: openssl completes a verified upgrade exactly where fleettrust says trusted.
            XCTAssertEqual(try servers.sClientVerifies(entry.oracle, port: entry.port), entry.status == .trusted, name)
        }
        let stripped = try XCTUnwrap(report.hosts.first { $0.name == "localhost:\(postfix.stripped)/smtp" })
        XCTAssertEqual(stripped.error?.code, .startTLSNotOffered)
        XCTAssertTrue(stripped.error?.message.contains("does not offer STARTTLS") == true, "\(String(describing: stripped.error))")
        let refused = try XCTUnwrap(report.hosts.first { $0.name == "localhost:\(ldapWithoutTLS)/ldap" })
        XCTAssertEqual(refused.error?.code, .startTLSNotOffered)
        XCTAssertTrue(refused.error?.message.contains("result 2") == true, "\(String(describing: refused.error))")
        let imap = try XCTUnwrap(report.hosts.first { $0.name == "localhost:\(dovecot.imap)/imap" })
        XCTAssertTrue(imap.evidence?.first?.contains("plain IMAP") == true, "\(imap.evidence ?? [])")

        // Replay judges the recorded chains again: same statuses, in every format.
        let replay = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--replay", lab.path("scan.json"), "--format", "json",
                                                                   "--known-hosts", lab.path("known_hosts"), "--tls-ca-file", lab.path("root.pem")])
        let replayed = try XCTUnwrap(try? RecordedScan.decode(Data(replay.stdout)), replay.stderrText)
        XCTAssertEqual(replayed.hosts.map(\.status), report.hosts.map(\.status))
        XCTAssertEqual(replayed.hosts.map(\.startTLS), report.hosts.map(\.startTLS))
        let table = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--replay", lab.path("scan.json"), "--format", "table",
                                                                  "--known-hosts", lab.path("known_hosts"), "--tls-ca-file", lab.path("root.pem")])
        XCTAssertTrue(table.stdoutText.contains("localhost:\(postgres)/postgres"), table.stdoutText)
        let metrics = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--replay", lab.path("scan.json"), "--format", "prometheus",
                                                                    "--known-hosts", lab.path("known_hosts"), "--tls-ca-file", lab.path("root.pem")])
        XCTAssertTrue(metrics.stdoutText.contains("name=\"localhost:\(postfix.offered)/smtp\""), metrics.stdoutText)
        XCTAssertTrue(metrics.stdoutText.split(separator: "\n").contains {
            $0.hasPrefix("fleettrust_host_status{name=\"localhost:\(ldapWrongName)/ldap\"") && $0.contains("status=\"name-mismatch\"")
        }, metrics.stdoutText)

        let terminal = try DashboardTmux(arguments: ["--replay", lab.path("scan.json"), "--known-hosts", lab.path("known_hosts"),
                                                     "--tls-ca-file", lab.path("root.pem"), "--audit-log", lab.path("audit.jsonl")])
        self.terminal = terminal
        let (listed, screen) = terminal.waitFor { $0.contains("localhost:\(postgres)/postgres") && $0.contains("localhost:\(postfix.offered)/smtp") }
        XCTAssertTrue(listed, screen)
        terminal.send("/")
        terminal.type(":\(dovecot.pop3)/")
        terminal.send("Enter")
        XCTAssertTrue(terminal.waitFor { $0.contains("1 shown") }.0, terminal.capture())
        terminal.send("Enter")
        let (detailed, detail) = terminal.waitFor { $0.contains("upgrade: plain POP3 on port \(dovecot.pop3), upgraded to TLS with STARTTLS") }
        XCTAssertTrue(detailed, detail)
    }
}
