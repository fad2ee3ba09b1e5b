import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// `NoHostAuthenticationForLocalhost yes` judged as `ssh` 9.2 judges it, rows of the ssh_config
/// differential with the real `ssh` as the oracle against a real `sshd` on 127.0.0.1 whose key
/// known_hosts records wrongly: a loopback peer reached directly is accepted whatever known_hosts
/// says; `HostKeyAlias`, a ProxyCommand (no peer address) or `RevokedHostKeys` take the exemption away.
final class LocalhostExemptionOracleTests: XCTestCase {
    func testLoopbackPeersAreAcceptedExactlyWhereTheRealSshAcceptsThem() throws {
        let lab = try SSHConfigOracleLab()
        defer { lab.stop() }
        let port = lab.sshd.port
        let spare = try lab.spareKey()
        let ed = try XCTUnwrap(lab.sshd.key(ofType: "ssh-ed25519"))
        let knownHosts = try lab.write("known_hosts", "[127.0.0.1]:\(port) \(spare.openSSHLine)\nother-name \(spare.openSSHLine)\n")
        let revoked = try lab.write("revoked", ed.openSSHLine + "\n")
        let config = try lab.write("config", """
            Host exempt alias revoked proxied plain
              HostName 127.0.0.1
              Port \(port)
            Host exempt alias revoked proxied
              NoHostAuthenticationForLocalhost yes
            Host plain
              NoHostAuthenticationForLocalhost no
            Host alias
              HostKeyAlias other-name
            Host revoked
              RevokedHostKeys \(revoked)
            Host proxied
              ProxyCommand /usr/bin/socat - TCP:127.0.0.1:%p
            Host *
              HostKeyAlgorithms ssh-ed25519
              UserKnownHostsFile \(knownHosts)
              GlobalKnownHostsFile /dev/null

            """)
        try lab.check([
            SSHConfigCase(alias: "exempt", ssh: .accepted, status: .trusted),
            SSHConfigCase(alias: "plain", ssh: .changed, status: .changed),
            SSHConfigCase(alias: "alias", ssh: .changed, status: .changed),
            SSHConfigCase(alias: "revoked", ssh: .revoked, status: .revoked),
            SSHConfigCase(alias: "proxied", ssh: .changed, status: .changed),
        ], config: config)
    }
}
