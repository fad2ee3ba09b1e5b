import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// A keyword `ssh` 9.2 reads one argument for, given more, makes `ssh` refuse the whole
/// configuration ("extra arguments at end of line"): the real `ssh` is the oracle that it stops,
/// and fleettrust leaves the host `unchecked`, naming the line, rather than judging the first word.
final class ExtraArgumentsOracleTests: XCTestCase {
    func testAOneArgumentKeywordGivenMoreIsRefusedAsTheRealSshRefusesIt() throws {
        let lab = try SSHConfigOracleLab()
        defer { lab.stop() }
        let lines = ["CheckHostIP no extra", "HostKeyAlgorithms ssh-ed25519 ecdsa-sha2-nistp256", "KexAlgorithms curve25519-sha256 ecdh-sha2-nistp256",
                     "VerifyHostKeyDNS no extra", "CanonicalizeHostname no extra", "StrictHostKeyChecking yes no", "HostKeyAlias a b"]
        for (index, line) in lines.enumerated() {
            let config = try lab.write("config-\(index)", """
                Host extra
                  HostName 127.0.0.1
                  Port \(lab.sshd.port)
                  \(line)
                  UserKnownHostsFile /dev/null
                  GlobalKnownHostsFile /dev/null

                """)
            let hosts = try lab.check([SSHConfigCase(alias: "extra", ssh: .other, status: .unchecked)], config: config)
            let reason = hosts.first { $0.name == "extra" }?.reason ?? ""
            XCTAssertTrue(reason.contains("\(config):4"), "\(line): \(reason)")
            XCTAssertTrue(reason.contains("extra arguments"), "\(line): \(reason)")
        }
    }
}
