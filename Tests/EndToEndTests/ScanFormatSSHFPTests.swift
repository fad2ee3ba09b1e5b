import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// `scan --format sshfp` prints, for the keys a real `sshd` proved, byte for byte what
/// `ssh-keygen -r NAME` prints for each key file.
final class ScanFormatSSHFPTests: XCTestCase {
    func testSSHFPFormatPrintsWhatSshKeygenPrintsForEachProvedKey() throws {
        let lab = try SSHConfigOracleLab()
        defer { lab.stop() }
        let inventory = try lab.write("inventory", "localhost:\(lab.sshd.port)\n")
        let run = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "sshfp", "--no-history", "--inventory", inventory,
                                                               "--known-hosts", lab.path("none"), "--timeout", "10"], limit: 60)
        let printed = run.stdoutText.split(separator: "\n").map(String.init)
        var expected: [String] = []
        for key in lab.sshd.publicKeys {
            let pub = try lab.write("key-\(expected.count).pub", key.openSSHLine + "\n")
            expected += try Tool.run("/usr/bin/ssh-keygen", ["-r", "localhost", "-f", pub]).stdout.split(separator: "\n").map(String.init)
        }
        XCTAssertEqual(printed.filter { !$0.hasPrefix(";") }.sorted(), expected.sorted(), run.stderrText)
        XCTAssertEqual(printed.filter { $0.hasPrefix(";") }.count, 1, "one comment names the host")
    }
}
