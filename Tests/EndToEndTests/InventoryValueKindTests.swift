import Foundation
import XCTest
import FleetTrustTestFleet

/// What the real binary makes of inventory values that are easy to misread: YAML and JSON lists
/// for the endpoint variables (their natural form), values of a kind fleettrust cannot read
/// (refused with file:line, never dropped), one row defined twice at different addresses (refused
/// naming both places), plain lists of `smtp://` lines (detected as plain lists) and one IPv6
/// address spelled three ways (one row). All of it is decided before any probe (`--dry-run`, or a
/// refusal), so no server is needed.
final class InventoryValueKindTests: InventoryScratchTestCase {
    private func fleettrust(_ arguments: [String]) throws -> ProgramRun {
        try ProgramRun.run(BuiltProducts.fleettrust, arguments + ["--no-history", "--known-hosts", root + "/kh"], limit: 60,
                           environment: ["HOME": root, "XDG_CONFIG_HOME": root, "PATH": "/usr/bin:/bin"])
    }

    /// The rows `scan --dry-run` would probe, by name.
    private func rows(_ inventories: [String], file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let run = try fleettrust(["scan", "--dry-run", "--wide"] + inventories.flatMap { ["--inventory", $0] })
        XCTAssertEqual(run.status, 0, run.stderrText, file: file, line: line)
        XCTAssertFalse(run.stderrText.contains("error"), run.stderrText, file: file, line: line)
        return run.stdoutText.split(separator: "\n").dropLast().map { String($0.prefix { $0 != " " }) }
    }

    private func assertRefused(_ inventories: [String], naming places: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let run = try fleettrust(["scan", "--format", "json"] + inventories.flatMap { ["--inventory", $0] })
        XCTAssertEqual(run.status, 64, run.stderrText, file: file, line: line)
        XCTAssertTrue(run.stdout.isEmpty, "nothing is scanned: \(run.stdoutText)", file: file, line: line)
        for place in places {
            XCTAssertTrue(run.stderrText.contains(place), "\(run.stderrText) lacks \(place)", file: file, line: line)
        }
    }

    func testYAMLAndJSONListsOfTheEndpointVariablesAreTheirCommaLists() throws {
        let yaml = try write("inv.yml", """
            all:
              hosts:
                web1: {ansible_host: 127.0.0.1, ansible_port: 1, fleettrust_tls_ports: [443, 8443]}
                mx1: {ansible_host: 127.0.0.1, ansible_port: 1, fleettrust_starttls: [smtp, submission]}
                db1: {ansible_host: 127.0.0.1, ansible_port: 1, fleettrust_starttls: {postgres: 5433, imap: null}}

            """)
        XCTAssertEqual(try rows([yaml]), ["web1", "web1:443/tls", "web1:8443/tls", "mx1", "mx1:25/smtp", "mx1:587/submission",
                                          "db1", "db1:5433/postgres", "db1:143/imap"])
        let json = try write("inv.json", """
            {"_meta": {"hostvars": {"web1": {"ansible_host": "127.0.0.1", "fleettrust_tls_ports": [443, 8443]},
                                    "mx1": {"ansible_host": "127.0.0.1", "fleettrust_starttls": ["smtp", "submission"]}}},
             "all": {"children": ["ungrouped"]}, "ungrouped": {"hosts": ["web1", "mx1"]}}

            """)
        XCTAssertEqual(try rows([json]), ["web1", "web1:443/tls", "web1:8443/tls", "mx1", "mx1:25/smtp", "mx1:587/submission"])
    }

    func testAValueOfAKindFleettrustCannotReadRefusesTheRunAtItsLine() throws {
        let yaml = try write("kinds.yml", """
            all:
              hosts:
                web1:
                  ansible_host: 127.0.0.1
                  fleettrust_policy: [pinned]
                web2:
                  ansible_port: [22]
              vars:
                fleettrust_tls_ports: {https: 443}

            """)
        try assertRefused([yaml], naming: [yaml + ":5: fleettrust_policy is a list", yaml + ":7: ansible_port is a list",
                                           yaml + ":9: fleettrust_tls_ports is a mapping", "refuses the run"])
        let json = try write("kinds.json", """
            {"_meta": {"hostvars": {"web1": {"ansible_host": "127.0.0.1",
                                             "fleettrust_policy": ["pinned"]}}},
             "ungrouped": {"hosts": ["web1"], "vars": {"ansible_user": {"name": "x"}}}}

            """)
        try assertRefused([json], naming: [json + ":2: fleettrust_policy is a list", json + ":3: ansible_user is a mapping"])
        try FileManager.default.createDirectory(atPath: root + "/dir/group_vars", withIntermediateDirectories: true)
        _ = try write("dir/hosts", "[web]\nweb1 ansible_host=127.0.0.1\n")
        let vars = try write("dir/group_vars/web.yml", "---\nfleettrust_starttls: [[smtp, 25]]\n")
        try assertRefused([root + "/dir"], naming: [vars + ":2: fleettrust_starttls is a list"])
    }

    func testOneRowDefinedTwiceAtDifferentAddressesRefusesTheRunNamingBoth() throws {
        let list = try write("list.txt", "smtp://localhost:21481\n")
        let mail = try write("mail.ini", "[mail]\nlocalhost ansible_host=127.0.0.2 fleettrust_starttls=smtp:21481\n")
        try assertRefused([list, mail], naming: [list + ":1", mail + ":2", "'localhost:21481/smtp'", "127.0.0.2 port 21481"])
        let ssh = try write("ssh.txt", "web1\n")
        let web = try write("web.ini", "web1 ansible_host=127.0.0.3\n")
        try assertRefused([web, ssh], naming: [ssh + ":1", web + ":1", "'web1'"])
        let same = try write("same.txt", "smtp://127.0.0.2:21481\n")
        let sameMail = try write("same.ini", "127.0.0.2 fleettrust_starttls=smtp:21481\n")
        XCTAssertEqual(try rows([same, sameMail]), ["127.0.0.2", "127.0.0.2:21481/smtp"], "one server twice is one row")
    }

    func testAPlainListOfSchemeLinesAndCommentedLinesIsAPlainList() throws {
        let list = try write("mail", "smtp://localhost:21481  # relay: outbound\nsubmission://mx.example\nweb1  # role: db\n")
        XCTAssertEqual(try rows([list]), ["localhost:21481/smtp", "mx.example:587/submission", "web1"])
    }

    func testOneIPv6AddressSpelledThreeWaysIsOneRow() throws {
        let list = try write("v6.txt", "[::1]\n[0:0:0:0:0:0:0:1]\n[::0001]\nsmtp://[0:0::1]:2525\nsmtp://[::1]:2525\n")
        XCTAssertEqual(try rows([list]), ["::1", "[::1]:2525/smtp"])
    }
}
