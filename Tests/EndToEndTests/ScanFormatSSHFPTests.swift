import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// `scan --format sshfp` prints, for the keys a real `sshd` proved and a pin vouches for, byte for
/// byte what `ssh-keygen -r NAME` prints for each key file; for keys nothing vouches for, a comment.
final class ScanFormatSSHFPTests: XCTestCase {
    func testSSHFPFormatPrintsWhatSshKeygenPrintsForEachPinnedKey() throws {
        let lab = try SSHConfigOracleLab()
        defer { lab.stop() }
        let inventory = try lab.write("inventory", "localhost:\(lab.sshd.port)\n")
        let pins = try lab.write("pins", "[localhost]:\(lab.sshd.port) " + lab.sshd.publicKeys.map(\.sha256Fingerprint).joined(separator: " ") + "\n")
        let run = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "sshfp", "--no-history", "--inventory", inventory,
                                                               "--known-hosts", lab.path("none"), "--pins", pins, "--timeout", "10"], limit: 60)
        let printed = run.stdoutText.split(separator: "\n").map(String.init)
        var expected: [String] = []
        for key in lab.sshd.publicKeys {
            let pub = try lab.write("key-\(expected.count).pub", key.openSSHLine + "\n")
            expected += try Tool.run("/usr/bin/ssh-keygen", ["-r", "localhost", "-f", pub]).stdout.split(separator: "\n").map(String.init)
        }
        XCTAssertEqual(printed.filter { !$0.hasPrefix(";") }.sorted(), expected.sorted(), run.stderrText)
        XCTAssertEqual(printed.filter { $0.hasPrefix(";") }.count, 1, "one comment names the host")
    }

    /// A new host's keys nothing vouches for get no record, and a comment says why; with
    /// `--trust-on-first-use` only the key `ssh` meets gets records.
    func testKeysNothingVouchesForGetNoRecords() throws {
        let lab = try SSHConfigOracleLab()
        defer { lab.stop() }
        let inventory = try lab.write("inventory", "localhost:\(lab.sshd.port)\n")
        let common = ["scan", "--format", "sshfp", "--no-history", "--inventory", inventory, "--known-hosts", lab.path("none"), "--timeout", "10"]
        let unpinned = try ProgramRun.run(BuiltProducts.fleettrust, common, limit: 60)
        XCTAssertEqual(unpinned.stdoutText.split(separator: "\n").filter { !$0.hasPrefix(";") }, [], unpinned.stdoutText)
        XCTAssertTrue(unpinned.stdoutText.contains("no record: new, and no pin proves its keys"), unpinned.stdoutText)
        let firstUse = try ProgramRun.run(BuiltProducts.fleettrust, common + ["--trust-on-first-use"], limit: 60)
        let records = firstUse.stdoutText.split(separator: "\n").filter { !$0.hasPrefix(";") }
        XCTAssertEqual(records.count, 2, "SHA-1 and SHA-256 records of the one key ssh meets: \(firstUse.stdoutText)")
        XCTAssertTrue(firstUse.stdoutText.contains("not saved: "), firstUse.stdoutText)
    }
}
