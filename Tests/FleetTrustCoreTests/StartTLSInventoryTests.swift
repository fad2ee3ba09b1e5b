import XCTest
@testable import FleetTrustCore

/// STARTTLS services as inventories name them: plain-list schemes with their protocols' ports, the
/// Ansible `fleettrust_starttls` list, each refused with its line when wrong; and the protocol
/// kept through the scan document into replay.
final class StartTLSInventoryTests: XCTestCase {
    func testEverySchemeIsATLSEndpointWithItsProtocolAndDefaultPort() {
        let inventory = InventoryFixtures.read(text: """
            smtp://mx.example.com
            submission://mx.example.com
            imap://mail.example.com
            pop3://mail.example.com:1110
            LDAP://dir.example.com
            postgres://192.0.2.5
            postgresql://db.example.com:5433

            """, format: .plain)
        XCTAssertEqual(inventory.diagnostics, [])
        XCTAssertEqual(inventory.hosts.map(\.name), ["mx.example.com:25/smtp", "mx.example.com:587/submission", "mail.example.com:143/imap",
                                                     "mail.example.com:1110/pop3", "dir.example.com:389/ldap", "192.0.2.5:5432/postgres",
                                                     "db.example.com:5433/postgres"])
        XCTAssertEqual(inventory.hosts.map(\.endpoint), [
            .tls(TLSEndpoint(serverName: "mx.example.com", startTLS: .smtp)), .tls(TLSEndpoint(serverName: "mx.example.com", startTLS: .submission)),
            .tls(TLSEndpoint(serverName: "mail.example.com", startTLS: .imap)), .tls(TLSEndpoint(serverName: "mail.example.com", startTLS: .pop3)),
            .tls(TLSEndpoint(serverName: "dir.example.com", startTLS: .ldap)), .tls(TLSEndpoint(serverName: nil, startTLS: .postgres)),
            .tls(TLSEndpoint(serverName: "db.example.com", startTLS: .postgres))])
        XCTAssertEqual(Set(inventory.hosts.map(\.endpointProtocol)), [.tls])
    }

    func testASchemeWithAPathOrAUserOrABadPortIsRefusedWithItsLine() {
        let inventory = InventoryFixtures.read(text: "smtp://mx.example.com/relay\nimap://me@mail.example.com\npostgres://db.example.com:99999\n",
                                               format: .plain)
        XCTAssertEqual(inventory.hosts, [])
        XCTAssertEqual(inventory.errors.map(\.location.line), [1, 2, 3], "\(inventory.diagnostics)")
    }

    func testStartTLSVariableAddsOneEndpointPerServiceAtTheHostsAddress() {
        let inventory = InventoryFixtures.read(text: """
            [mail]
            mx1.example.com ansible_host=192.0.2.30 fleettrust_starttls="smtp:25, submission, postgresql:5433, smtp"
            [mail:vars]
            fleettrust_policy=pinned

            """, format: .ansibleINI)
        XCTAssertEqual(inventory.errors, [])
        XCTAssertEqual(inventory.hosts.map(\.name), ["mx1.example.com", "mx1.example.com:25/smtp", "mx1.example.com:587/submission",
                                                     "mx1.example.com:5433/postgres"])
        let smtp = inventory.hosts[1]
        XCTAssertEqual(smtp.address, "192.0.2.30")
        XCTAssertEqual(smtp.endpoint, .tls(TLSEndpoint(serverName: "mx1.example.com", startTLS: .smtp)))
        XCTAssertEqual(smtp.policy, "pinned")
        XCTAssertEqual(smtp.groups, ["mail"])
    }

    func testAnUnknownProtocolOrPortInTheVariableIsRefusedWithItsLine() {
        let inventory = InventoryFixtures.read(text: """
            [mail]
            mx1.example.com fleettrust_starttls=smtp:25,ftp:21
            mx2.example.com fleettrust_starttls=imap:x

            """, format: .ansibleINI)
        XCTAssertEqual(inventory.hosts.map(\.name), ["mx1.example.com", "mx2.example.com"])
        XCTAssertEqual(inventory.errors.map(\.location.line), [2, 3], "\(inventory.diagnostics)")
        XCTAssertTrue(inventory.errors[0].message.contains("'ftp' is not a STARTTLS protocol"), inventory.errors[0].message)
        XCTAssertTrue(inventory.errors[1].message.contains("'x' is not a port"), inventory.errors[1].message)
    }

    func testTheProtocolIsRecordedAndReplayedWithTheFailureItMet() throws {
        var host = InventoryHost(name: "mx.example.com:25/smtp", address: "127.0.0.1", port: 25)
        host.endpoint = .tls(TLSEndpoint(serverName: "mx.example.com", startTLS: .smtp))
        let failure = ProbeFailure(stage: .tlsHandshake, code: .startTLSNotOffered, message: "the SMTP server does not offer STARTTLS in its EHLO reply")
        let judge = FleetJudge(knownHosts: KnownHosts(files: []), pins: nil)
        let judged = judge.judge(host, ProbeResult(host: "127.0.0.1", port: 25, failures: [failure]))
        XCTAssertEqual(judged.status, .error)
        let document = try ScanReport(knownHostsFiles: [], pinFiles: [], judged: [judged]).encoded()
        let line = try XCTUnwrap(String(decoding: document, as: UTF8.self).split(separator: "\n").first { $0.contains("\"starttls\"") })
        XCTAssertTrue(line.contains("\"starttls\":\"smtp\""), String(line))
        XCTAssertTrue(line.contains("\"code\":\"starttls-not-offered\""), String(line))
        let replayed = try ScanReplay.load(document, source: "scan.json")
        XCTAssertEqual(replayed.first?.host.endpoint, .tls(TLSEndpoint(serverName: "mx.example.com", startTLS: .smtp)),
                       "the name comes from the row, as the live scan made it, never from the address")
        XCTAssertEqual(replayed.first.map { judge.judge($0.host, $0.result) }?.failure?.code, .startTLSNotOffered)
    }
}
