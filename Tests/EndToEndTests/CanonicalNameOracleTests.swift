import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// `CanonicalizeHostname` and its companions judged as `ssh` 9.2 judges them: rows of the
/// ssh_config differential in a mount namespace whose `/etc/hosts` names the lab's `sshd` under
/// canonical names and aliases (getaddrinfo's canonical name is the first name of the line), the
/// real `ssh` as the oracle (glibc matches a name ending in `.` only to a line written so, and
/// fleettrust resolves the canonical name again to probe it, so both forms are listed). known_hosts records the right key only under the name `ssh` looks up,
/// and another key under the names it does not, so a wrong name shows as a wrong verdict.
final class CanonicalNameOracleTests: XCTestCase {
    func testKnownHostsIsLookedUpUnderTheNameSshCanonicalizesTo() throws {
        let lab = try SSHConfigOracleLab()
        defer { lab.stop() }
        let port = lab.sshd.port
        let spare = try lab.spareKey()
        let ed = try XCTUnwrap(lab.sshd.key(ofType: "ssh-ed25519"))
        let hosts = try lab.write("hosts", """
            127.0.0.1 localhost
            127.0.0.1 real.example.test. web.example.test.
            127.0.0.1 solo.example.test.
            127.0.0.1 real.example.test solo.example.test

            """)
        let knownHosts = try lab.write("known_hosts", """
            [real.example.test]:\(port) \(ed.openSSHLine)
            [web.example.test]:\(port) \(spare.openSSHLine)
            [web]:\(port) \(spare.openSSHLine)
            [solo]:\(port) \(ed.openSSHLine)
            [solo.example.test]:\(port) \(spare.openSSHLine)
            solo-alias \(ed.openSSHLine)
            [dotted.example]:\(port) \(spare.openSSHLine)

            """)
        let config = try lab.write("config", """
            CanonicalizeHostname yes
            CanonicalDomains nope.test example.test
            CanonicalizePermittedCNAMEs *.example.test:real.example.test
            Host web solo nosuch strict dotted.example
              Port \(port)
            Host strict
              CanonicalizeFallbackLocal no
            Host dotted.example
              HostName 127.0.0.1
            Host *
              HostKeyAlgorithms ssh-ed25519
              UserKnownHostsFile \(knownHosts)
              GlobalKnownHostsFile /dev/null
            Match canonical host solo.example.test
              HostKeyAlias solo-alias
            Match final host web.example.test
              HostKeyAlias never-used

            """)
        try lab.check([
            // web -> web.example.test (second domain) -> real.example.test (a permitted CNAME).
            SSHConfigCase(alias: "web", ssh: .accepted, status: .trusted),
            // solo -> solo.example.test, where `Match canonical` sets the alias recorded with the right key.
            SSHConfigCase(alias: "solo", ssh: .accepted, status: .trusted),
            // Found under no domain: the name as typed, which resolves nowhere.
            SSHConfigCase(alias: "nosuch", ssh: .other, status: .unreachable),
            // Found under no domain and no fallback: ssh stops before connecting ("Could not resolve
            // host"); the name resolves for fleettrust no better, so the probe fails at stage resolve.
            SSHConfigCase(alias: "strict", ssh: .other, status: .unreachable),
            // An address is never canonicalized: nothing is recorded for it.
            SSHConfigCase(alias: "dotted.example", ssh: .unknown, status: .new),
        ], config: config, hosts: hosts)
    }
}
