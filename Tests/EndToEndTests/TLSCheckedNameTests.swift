import FleetTrustCore
import FleetTrustTestFleet
import Foundation
import XCTest

/// Which name a TLS endpoint's certificate is checked against, with a real `openssl s_server`
/// serving a CA-valid certificate that names only 127.0.0.1 and `openssl s_client
/// -verify_hostname` as the oracle: always the row's own name, never the address it is reached
/// at (`ansible_host`) nor the SNI a recorded scan says was sent; a name no certificate can carry
/// is refused, never probed.
final class TLSCheckedNameTests: XCTestCase {
    private var lab: TLSTestLab!

    override func setUpWithError() throws {
        lab = try TLSTestLab()
    }

    override func tearDown() {
        lab?.stop()
    }

    /// Serves a certificate from the test root naming only the IP address 127.0.0.1.
    private func serveAddressOnlyCertificate() throws -> Int {
        for name in ["root", "leaf"] { try lab.key(name) }
        try lab.selfSigned("root", key: "root", subject: "fleettrust test root", ca: true)
        try lab.signed("ip-leaf", key: "leaf", subject: "127.0.0.1", by: "root", extensions: ["subjectAltName=IP:127.0.0.1"])
        return try lab.serve(certificate: "ip-leaf", key: "leaf")
    }

    /// Whether `openssl s_client` accepts the server's certificate for `name`.
    private func opensslAccepts(port: Int, name: String) throws -> Bool {
        let run = try ProgramRun.run("/usr/bin/openssl", ["s_client", "-connect", "127.0.0.1:\(port)", "-verify_hostname", name,
                                                          "-CAfile", lab.path("root.pem"), "-verify_return_error", "-brief"], limit: 20)
        return run.status == 0
    }

    private func scan(_ arguments: [String]) throws -> (ProgramRun, RecordedScan) {
        try lab.write("known_hosts", "")
        let run = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "json", "--no-history", "--known-hosts", lab.path("known_hosts"),
                                                                "--timeout", "3", "--tls-ca-file", lab.path("root.pem")] + arguments, limit: 120)
        let report = try XCTUnwrap(try? RecordedScan.decode(Data(run.stdout)), "no JSON: \(run.stderrText)")
        return (run, report)
    }

    func testTheRowsNameIsCheckedNeverItsAddressNorARecordedSNI() throws {
        let port = try serveAddressOnlyCertificate()
        try lab.write("hosts.ini", """
            [web]
            mail.example.com. ansible_host=127.0.0.1 fleettrust_tls_ports=\(port)
            mäil.example.com ansible_host=127.0.0.1 fleettrust_tls_ports=\(port)
            web;id ansible_host=127.0.0.1 fleettrust_tls_ports=\(port)
            -oProxyCommand=id ansible_host=127.0.0.1 fleettrust_tls_ports=\(port)
            127.0.0.1 fleettrust_tls_ports=\(port)
            [web:vars]
            ansible_port=1

            """)
        let (run, report) = try scan(["--inventory", lab.path("hosts.ini")])
        func entry(_ name: String) throws -> RecordedScan.Host {
            try XCTUnwrap(report.hosts.first { $0.name == "\(name):\(port)/tls" }, "no row for \(name) in \(report.hosts.map(\.name))")
        }
        XCTAssertFalse(try opensslAccepts(port: port, name: "mail.example.com."), "oracle: the certificate does not name mail.example.com.")
        XCTAssertTrue(try opensslAccepts(port: port, name: "127.0.0.1"), "oracle: the certificate names the address")
        XCTAssertEqual(try entry("mail.example.com.").status, .nameMismatch, "checked against the name, not ansible_host")
        XCTAssertEqual(try entry("127.0.0.1").status, .trusted, "a row named by its address is checked against it")
        for refused in ["mäil.example.com", "web;id", "-oProxyCommand=id"] {
            let row = try entry(refused)
            XCTAssertEqual(row.status, .error, refused)
            XCTAssertEqual(row.error?.code, .unsafeName, refused)
            XCTAssertEqual(row.error?.stage, "proxy", "\(refused): refused before any probe")
            XCTAssertTrue(row.error?.message.contains("hosts.ini:") == true, "\(refused): \(row.error?.message ?? "")")
        }
        XCTAssertTrue(run.stderrText.contains("neither a DNS name"), run.stderrText)

        // A recording whose SNI is edited to the address is judged by the row's name all the same.
        var document = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout)) as? [String: Any])
        var hosts = try XCTUnwrap(document["hosts"] as? [[String: Any]])
        let index = try XCTUnwrap(hosts.firstIndex { $0["name"] as? String == "mail.example.com.:\(port)/tls" })
        var session = try XCTUnwrap(hosts[index]["tls"] as? [String: Any], "no tls session recorded")
        session["sni"] = "127.0.0.1"
        hosts[index]["tls"] = session
        document["hosts"] = hosts
        try lab.write("edited.json", String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self))
        let (_, replayed) = try scan(["--replay", lab.path("edited.json")])
        XCTAssertEqual(replayed.hosts.first { $0.name == "mail.example.com.:\(port)/tls" }?.status, .nameMismatch,
                       "the recorded SNI is informational; the row's name is checked")
        XCTAssertEqual(replayed.hosts.first { $0.name == "127.0.0.1:\(port)/tls" }?.status, .trusted)
        XCTAssertEqual(replayed.hosts.first { $0.name == "web;id:\(port)/tls" }?.error?.code, .unsafeName, "refused again on replay")
    }

    func testAPlainListTLSLineWithAnUnknownSchemeOrABadHostIsRefusedWithItsLine() throws {
        let port = try serveAddressOnlyCertificate()
        try lab.write("endpoints", """
            smtps://localhost
            http://localhost
            smtp://web;id:25
            ldap://-oProxyCommand=x
            smtp://127.0.0.1?x=1
            tls://127.0.0.1:\(port)

            """)
        let (run, report) = try scan(["--inventory", lab.path("endpoints"), "--inventory-format", "plain"])
        let errors = run.stderrText
        XCTAssertTrue(errors.contains("endpoints:1: 'smtps://localhost': scheme 'smtps' is not one fleettrust probes (https, tls, smtp"), errors)
        XCTAssertTrue(errors.contains("endpoints:2: 'http://localhost': scheme 'http'"), errors)
        XCTAssertFalse(errors.contains("is not a number"), errors)
        XCTAssertTrue(errors.contains("endpoints:3: 'smtp://web;id:25': 'web;id' is neither a host name"), errors)
        XCTAssertTrue(errors.contains("endpoints:4: 'ldap://-oProxyCommand=x': '-oProxyCommand=x' is neither a host name"), errors)
        XCTAssertTrue(errors.contains("endpoints:5: 'smtp://127.0.0.1?x=1': '127.0.0.1?x=1' is neither a host name"), errors)
        XCTAssertEqual(report.hosts.map(\.name), ["127.0.0.1:\(port)/tls"], "only the good line is probed")
        XCTAssertEqual(report.hosts.first?.status, .trusted)
    }
}
