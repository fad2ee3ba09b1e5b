import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// `Match exec` judged as `ssh` 9.2 judges under it: rows of the ssh_config differential against
/// a real `sshd`, the real `ssh -o StrictHostKeyChecking=yes` as the oracle, one configuration given
/// as the inventory and as the user's own (`--ssh-config`). known_hosts records the right key only
/// where a block behind an `exec` points, so a command run wrongly (or not at all) shows as a wrong
/// verdict: true and false commands, the `%h %p %r %n` tokens, an exec deciding `HostKeyAlias`,
/// one in the final pass after canonicalization (a mount namespace whose `/etc/hosts` names the
/// lab), and one that outlasts fleettrust's bound (`unchecked`: the block may apply).
final class MatchExecOracleLabTests: XCTestCase {
    func testBlocksBehindExecDecideAsTheRealSshDecides() throws {
        let lab = try SSHConfigOracleLab()
        defer { lab.stop() }
        let port = lab.sshd.port
        let spare = try lab.spareKey()
        let ed = try XCTUnwrap(lab.sshd.key(ofType: "ssh-ed25519"))
        let hosts = try lab.write("hosts", """
            127.0.0.1 localhost
            127.0.0.1 exec-final.lab.test.
            127.0.0.1 exec-final.lab.test

            """)
        let good = try lab.write("good", "[127.0.0.1]:\(port) \(ed.openSSHLine)\n")
        let wrong = try lab.write("wrong", "[127.0.0.1]:\(port) \(spare.openSSHLine)\nrecorded-alias \(ed.openSSHLine)\n")
        let config = try lab.write("config", """
            Host *
              User fleettrust-oracle
            Host exec-true exec-false exec-tokens exec-alias exec-slow
              HostName 127.0.0.1
              Port \(port)
            Host exec-final
              CanonicalizeHostname yes
              CanonicalDomains lab.test
              Port \(port)
            Match originalhost exec-true exec "true"
              UserKnownHostsFile \(good)
            Match originalhost exec-false exec "false"
              UserKnownHostsFile \(good)
            Match originalhost exec-tokens exec "test %h = 127.0.0.1 && test %p = \(port) && test %r = fleettrust-oracle && test %n = exec-tokens"
              UserKnownHostsFile \(good)
            Match originalhost exec-alias exec "test %k = 127.0.0.1"
              HostKeyAlias recorded-alias
            Match canonical exec "test %h = exec-final.lab.test"
              HostKeyAlias recorded-alias
            Match originalhost exec-slow exec "sleep 6; false"
              HostKeyAlias never-used
            Host exec-slow
              UserKnownHostsFile \(good)
            Host *
              HostKeyAlgorithms ssh-ed25519
              UserKnownHostsFile \(wrong)
              GlobalKnownHostsFile /dev/null

            """)
        try lab.check([
            SSHConfigCase(alias: "exec-true", ssh: .accepted, status: .trusted),
            SSHConfigCase(alias: "exec-false", ssh: .changed, status: .changed),
            SSHConfigCase(alias: "exec-tokens", ssh: .accepted, status: .trusted),
            SSHConfigCase(alias: "exec-alias", ssh: .accepted, status: .trusted),
            SSHConfigCase(alias: "exec-final", ssh: .accepted, status: .trusted),
            // ssh waits the 6 s out and the block does not apply; fleettrust stops waiting at 5 s,
            // and the block may apply.
            SSHConfigCase(alias: "exec-slow", ssh: .accepted, status: .unchecked),
        ], config: config, hosts: hosts)
    }
}
