import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// `VerifyHostKeyDNS` judged as `ssh` 9.2 judges it, against a real validating resolver
/// (`DNSSECResolverLab`: unbound serving a zone signed by BIND's tools and an unsigned one) and
/// the real `ssh` as the oracle, both given the lab's resolv.conf in a mount namespace.
final class SSHFPOracleTests: XCTestCase {
    func testSSHFPAnswersDecideAsSshDoes() throws {
        let lab = try SSHConfigOracleLab()
        defer { lab.stop() }
        let port = lab.sshd.port
        let ed = try XCTUnwrap(lab.sshd.key(ofType: "ssh-ed25519"))
        let spare = try lab.spareKey()
        let edPub = try lab.write("ed.pub", ed.openSSHLine + "\n")
        func sshfp(_ name: String, _ pub: String) throws -> String {
            let output = try Tool.run("/usr/bin/ssh-keygen", ["-r", name, "-f", pub])
            guard output.status == 0 else { throw TestFleetError.toolFailed("ssh-keygen -r: \(output.stderr)") }
            return output.stdout
        }
        let signed = "ok IN A 127.0.0.1\n" + (try sshfp("ok", edPub)) + "stale IN A 127.0.0.1\n" + (try sshfp("stale", lab.path("spare.pub")))
            + "none IN A 127.0.0.1\n"
        let dns = try DNSSECResolverLab(directory: lab.scratch, signed: ("fleet.example", signed),
                                        unsigned: ("plain.example", "ok IN A 127.0.0.1\n" + (try sshfp("ok", edPub))))
        defer { dns.stop() }
        func knownHosts(_ name: String, _ text: String) throws -> String { try lab.write("kh-" + name, text) }
        let empty = try knownHosts("empty", "")
        let rows: [(alias: String, hostName: String, mode: String, knownHosts: String)] = [
            ("dns-ok", "ok.fleet.example", "yes", empty),
            ("dns-ok-changed", "ok.fleet.example", "yes", try knownHosts("changed", "[ok.fleet.example]:\(port) \(spare.openSSHLine)\n")),
            ("dns-ok-revoked", "ok.fleet.example", "yes", try knownHosts("revoked", "@revoked [ok.fleet.example]:\(port) \(ed.openSSHLine)\n")),
            ("dns-ok-ask", "ok.fleet.example", "ask", empty),
            ("dns-plain", "ok.plain.example", "yes", empty),
            ("dns-stale", "stale.fleet.example", "yes", empty),
            ("dns-stale-known", "stale.fleet.example", "yes", try knownHosts("stale", "[stale.fleet.example]:\(port) \(ed.openSSHLine)\n")),
            ("dns-none", "none.fleet.example", "yes", empty),
            ("dns-alias", "ok.fleet.example", "yes", try knownHosts("alias", "none.fleet.example \(spare.openSSHLine)\n")),
        ]
        let config = try lab.write("config", rows.map { row in
            "Host \(row.alias)\n  HostName \(row.hostName)\n  VerifyHostKeyDNS \(row.mode)\n  UserKnownHostsFile \(row.knownHosts)\n"
        }.joined() + "Host dns-alias\n  HostKeyAlias none.fleet.example\n" + "Host *\n  Port \(port)\n  HostKeyAlgorithms ssh-ed25519\n  GlobalKnownHostsFile /dev/null\n")
        let hosts = try lab.write("hosts", "127.0.0.1 localhost\n")
        let scanned = try lab.check([
            // A validated match accepts the key before known_hosts: its CHANGED and @revoked lines do not count.
            SSHConfigCase(alias: "dns-ok", ssh: .accepted, status: .trusted),
            SSHConfigCase(alias: "dns-ok-changed", ssh: .accepted, status: .trusted),
            SSHConfigCase(alias: "dns-ok-revoked", ssh: .accepted, status: .trusted),
            // `ask`, an unsigned zone, a stale record or none: known_hosts decides.
            SSHConfigCase(alias: "dns-ok-ask", ssh: .unknown, status: .new),
            SSHConfigCase(alias: "dns-plain", ssh: .unknown, status: .new),
            SSHConfigCase(alias: "dns-stale", ssh: .unknown, status: .new),
            SSHConfigCase(alias: "dns-stale-known", ssh: .accepted, status: .trusted),
            SSHConfigCase(alias: "dns-none", ssh: .unknown, status: .new),
            // DNS is asked about the HostName, never the HostKeyAlias (which only names known_hosts lines).
            SSHConfigCase(alias: "dns-alias", ssh: .accepted, status: .trusted),
        ], config: config, hosts: hosts, resolv: try dns.resolvConf(trustAD: true))
        func entry(_ alias: String) -> ScanReport.SSHFPEntry? { scanned.first { $0.name == alias }?.sshfp }
        XCTAssertEqual(scanned.first { $0.name == "dns-ok" }?.method, "dns")
        XCTAssertEqual(entry("dns-ok")?.verdict, .validatedMatch)
        XCTAssertEqual(entry("dns-plain")?.verdict, .unvalidatedMatch)
        XCTAssertEqual(entry("dns-stale-known")?.verdict, .mismatch)
        XCTAssertEqual(entry("dns-stale-known")?.staleFingerprints, [ed.sha256Fingerprint], "a stale record is a finding on a trusted host")
        XCTAssertEqual(entry("dns-none")?.verdict, SSHFPFinding.Verdict.none)

        // Without `options trust-ad` glibc clears the AD bit: the signed zone's match no longer accepts.
        let plain = try lab.check([SSHConfigCase(alias: "dns-ok", ssh: .unknown, status: .new)],
                                  config: config, hosts: hosts, resolv: try dns.resolvConf(trustAD: false))
        XCTAssertEqual(plain.first { $0.name == "dns-ok" }?.sshfp?.verdict, .unvalidatedMatch)
    }
}
