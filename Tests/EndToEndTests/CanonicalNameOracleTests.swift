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

    /// The corners: the bare name's CNAME when no domain gave a name, a rule matched against the
    /// CNAME as the resolver wrote it, an address `HostName` in its numeric form for the second
    /// reading, `ProxyJump none` (not direct for the domains), `CanonicalDomains` as `valid_domain`
    /// reads them, and `AddressFamily` with an address (one of the other family does not resolve).
    func testTheCornersOfCanonicalizationDecideAsTheRealSshDecides() throws {
        let lab = try SSHConfigOracleLab()
        defer { lab.stop() }
        let port = lab.sshd.port
        let spare = try lab.spareKey()
        let ed = try XCTUnwrap(lab.sshd.key(ofType: "ssh-ed25519"))
        let hosts = try lab.write("hosts", """
            127.0.0.1 localhost
            127.0.0.1 target.test db.corp.test
            127.0.0.1 Upper.Example.Test. cased.example.test.
            127.0.0.1 cased.example.test upper.example.test
            127.0.0.1 jump.example.test. jump
            127.0.0.1 dot.example.test. dot.example.test
            127.0.0.1 under.exa_mple.test. under.exa_mple.test

            """)
        let knownHosts = try lab.write("known_hosts", """
            [target.test]:\(port) \(spare.openSSHLine)
            [db.corp.test]:\(port) \(ed.openSSHLine)
            [cased.example.test]:\(port) \(ed.openSSHLine)
            [upper.example.test]:\(port) \(spare.openSSHLine)
            [127.0.0.1]:\(port) \(spare.openSSHLine)
            final-alias \(ed.openSSHLine)
            [jump]:\(port) \(ed.openSSHLine)
            [jump.example.test]:\(port) \(spare.openSSHLine)
            [dot.example.test]:\(port) \(ed.openSSHLine)
            [dot]:\(port) \(spare.openSSHLine)
            [under.exa_mple.test]:\(port) \(ed.openSSHLine)
            [under]:\(port) \(spare.openSSHLine)

            """)
        let config = try lab.write("config", """
            Host db.corp.test
              CanonicalizePermittedCNAMEs *:*.test
            Host cased
              CanonicalDomains example.test
              CanonicalizePermittedCNAMEs *.example.test:*.example.test
            Host addr
              HostName 127.1
            Match final host 127.0.0.1
              HostKeyAlias final-alias
            Host jump
              ProxyJump none
              CanonicalDomains example.test
            Host dot
              CanonicalDomains example.test.
            Host under
              CanonicalDomains exa_mple.test
            Host af-inet af-any af-inet6
              HostName 127.0.0.1
            Host af-inet
              AddressFamily inet
            Host af-any
              AddressFamily any
            Host af-inet6
              AddressFamily inet6
            Host *
              CanonicalizeHostname yes
              Port \(port)
              HostKeyAlgorithms ssh-ed25519
              UserKnownHostsFile \(knownHosts)
              GlobalKnownHostsFile /dev/null

            """)
        try lab.check([
            // Two dots, so no domain is tried; the bare name's CNAME (target.test) is followed.
            SSHConfigCase(alias: "db.corp.test", ssh: .changed, status: .changed),
            // cased.example.test's canonical name is Upper.Example.Test: the lower-cased rule does not match it.
            SSHConfigCase(alias: "cased", ssh: .accepted, status: .trusted),
            // 127.1 is 127.0.0.1 for `Match final host` (so are the af- hosts, whose HostName is 127.0.0.1).
            SSHConfigCase(alias: "addr", ssh: .accepted, status: .trusted),
            // ProxyJump none: no domain is tried, the name stays as typed.
            SSHConfigCase(alias: "jump", ssh: .accepted, status: .trusted),
            // A trailing dot on a domain is dropped; an underscore is accepted.
            SSHConfigCase(alias: "dot", ssh: .accepted, status: .trusted),
            SSHConfigCase(alias: "under", ssh: .accepted, status: .trusted),
            SSHConfigCase(alias: "af-inet", ssh: .accepted, status: .trusted),
            SSHConfigCase(alias: "af-any", ssh: .accepted, status: .trusted),
            // An IPv4 address under inet6: "Could not resolve hostname 127.0.0.1: Address family
            // for hostname not supported", for ssh and for the probe.
            SSHConfigCase(alias: "af-inet6", ssh: .other, status: .unreachable),
        ], config: config, hosts: hosts)

        // A `Match final` whose block sets nothing still asks for the second reading, where `Host`
        // matches the address in its numeric form.
        let bare = try lab.write("config-final", """
            Host addr-host
              HostName 0x7f.1
              Port \(port)
            Match final
            Host 127.0.0.1
              HostKeyAlias final-alias
            Host *
              HostKeyAlgorithms ssh-ed25519
              UserKnownHostsFile \(knownHosts)
              GlobalKnownHostsFile /dev/null

            """)
        try lab.check([SSHConfigCase(alias: "addr-host", ssh: .accepted, status: .trusted)], config: bare, hosts: hosts)
    }

    /// `AddressFamily` decides which server `ssh` meets and which name it canonicalizes to: a name
    /// whose IPv4 address serves another key and whose IPv6 address (::1) the recorded one, and a
    /// short name found under the first domain only by IPv4 and under the second only by IPv6.
    /// glibc answers an IPv4 lookup of a name that /etc/hosts gives ::1 with 127.0.0.1 too, so the
    /// two servers of the first listen on another port, where 127.0.0.1 refuses and ssh goes on.
    func testAddressFamilyDecidesWhichServerAndWhichNameSshMeets() throws {
        let lab = try SSHConfigOracleLab()
        defer { lab.stop() }
        let port = lab.sshd.port
        let recorded = try LoopbackSSHD(address: "127.0.0.3")
        defer { recorded.stop() }
        try XCTSkipUnless(recorded.listensOnIPv6, "this machine has no ::1")
        let impostor = try LoopbackSSHD(address: "127.0.0.2", port: recorded.port, ipv6: false)
        defer { impostor.stop() }
        let spare = try lab.spareKey()
        let ed = try XCTUnwrap(lab.sshd.key(ofType: "ssh-ed25519"))
        let dualKey = try XCTUnwrap(recorded.key(ofType: "ssh-ed25519"))
        let hosts = try lab.write("hosts", """
            127.0.0.1 localhost
            127.0.0.2 dual.test
            ::1 dual.test
            127.0.0.1 web.a.test. web.a.test
            ::1 web.b.test. web.b.test

            """)
        let knownHosts = try lab.write("known_hosts", """
            [dual.test]:\(recorded.port) \(dualKey.openSSHLine)
            [web.a.test]:\(port) \(ed.openSSHLine)
            [web.b.test]:\(port) \(spare.openSSHLine)

            """)
        // The two dual.test rows share a known_hosts name and meet different servers: scanned
        // together they are a split view (one scan proved two keys for one name), so each is
        // read from a configuration of its own, as ssh meets each alone.
        func config(_ family: String) throws -> String {
            try lab.write("config-\(family)", """
                Host dual-\(family)
                  HostName dual.test
                  Port \(recorded.port)
                  AddressFamily \(family)
                Host web-any web-inet6
                  HostName web
                  CanonicalizeHostname yes
                  CanonicalDomains a.test b.test
                Host web-inet6
                  AddressFamily inet6
                Host *
                  Port \(port)
                  HostKeyAlgorithms ssh-ed25519
                  UserKnownHostsFile \(knownHosts)
                  GlobalKnownHostsFile /dev/null

                """)
        }
        try lab.check([
            // inet6: only ::1, the recorded key.
            SSHConfigCase(alias: "dual-inet6", ssh: .accepted, status: .trusted),
        ], config: try config("inet6"), hosts: hosts)
        try lab.check([
            // inet: 127.0.0.1 (refused), then 127.0.0.2, whose server holds another key.
            SSHConfigCase(alias: "dual-inet", ssh: .changed, status: .changed),
            // web.a.test (IPv4 only) first: the recorded key.
            SSHConfigCase(alias: "web-any", ssh: .accepted, status: .trusted),
            // inet6 does not find web.a.test, so web.b.test, recorded with another key.
            SSHConfigCase(alias: "web-inet6", ssh: .changed, status: .changed),
        ], config: try config("inet"), hosts: hosts)
    }
}
