import FleetTrustCore
import FleetTrustTestFleet
import Foundation
import XCTest

/// What `tidy --fix` says afterwards is about the files as they are now.
final class TidyFixSummaryTests: XCTestCase {
    private var scratch = ""
    private var knownHosts: String { scratch + "/known_hosts" }

    override func setUpWithError() throws {
        scratch = NSTemporaryDirectory() + "tidy-summary-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        try Tool.check("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", scratch + "/k1"])
        try Tool.check("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", scratch + "/k2"])
        try Tool.check("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", scratch + "/k3"])
        let k1 = try HostKey(openSSHLine: String(contentsOfFile: scratch + "/k1.pub", encoding: .utf8)).openSSHLine
        let k2 = try HostKey(openSSHLine: String(contentsOfFile: scratch + "/k2.pub", encoding: .utf8)).openSSHLine
        let k3 = try HostKey(openSSHLine: String(contentsOfFile: scratch + "/k3.pub", encoding: .utf8)).openSSHLine
        // line 2 and 3: a duplicate; lines 4 and 5: a conflicting pair (two ed25519 keys for db1).
        try "# team\nweb1 \(k1)\nweb1 \(k1)\ndb1 \(k2)\ndb1 \(k3)\n".write(toFile: knownHosts, atomically: true, encoding: .utf8)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: scratch) }

    private func tidy(_ arguments: [String]) throws -> ProgramRun {
        try ProgramRun.run(BuiltProducts.fleettrust, ["tidy", "--known-hosts", knownHosts, "--no-history"] + arguments)
    }

    func testTheClosingSummaryIsTheFilesStateAfterTheFixWithTodaysLineNumbers() throws {
        let before = try tidy([])
        XCTAssertEqual(before.status, 2, before.stdoutText)
        XCTAssertTrue(before.stdoutText.contains(":3  duplicate"), before.stdoutText)

        let fixed = try tidy(["--fix", "--kind", "duplicate", "--yes"])
        XCTAssertTrue(fixed.stdoutText.contains("This line will be removed:"), fixed.stdoutText)
        let after = fixed.stdoutText.components(separatedBy: "left after the fix:\n")
        XCTAssertEqual(after.count, 2, fixed.stdoutText)
        XCTAssertFalse(after[1].contains("duplicate"), "a finding the fix resolved is still reported: \(after[1])")
        // db1's lines moved up from 4 and 5 to 3 and 4.
        XCTAssertTrue(after[1].contains(":3  conflicting") && after[1].contains(":4  conflicting"), after[1])
        XCTAssertFalse(after[1].contains(":5  "), "a line number from before the fix: \(after[1])")
        XCTAssertEqual(fixed.status, 2, "a conflicting pair is left: still an alarm")

        // With no history to say which key db1 holds, removing either line changes what ssh decides for one of them.
        let conflicts = try tidy(["--fix", "--kind", "conflicting", "--yes"])
        XCTAssertTrue(conflicts.stdoutText.contains("kept \(knownHosts):4: removing it would change what ssh decides for db1"),
                      conflicts.stdoutText)
        XCTAssertTrue(conflicts.stdoutText.contains("nothing removed"), conflicts.stdoutText)
        XCTAssertEqual(conflicts.status, 2, "the conflicting pair is left: still an alarm")
    }

    func testALineSelectionThatRemovesNothingSaysWhy() throws {
        let run = try ProgramRun.run(BuiltProducts.fleettrust, ["tidy", "--known-hosts", knownHosts, "--no-history", "--fix", "--yes",
                                                                 "--line", scratch + "/./known_hosts:3", "--line", knownHosts + ":1",
                                                                 "--line", scratch + "/other:2"])
        XCTAssertTrue(run.stdoutText.contains("removed 1 line"), "a path spelled another way selects the same file: \(run.stdoutText)")
        XCTAssertTrue(run.stdoutText.contains(knownHosts + ":1: not removed: no finding on that line"), run.stdoutText)
        XCTAssertTrue(run.stdoutText.contains(scratch + "/other:2: not removed: that file is not among those read"), run.stdoutText)
    }

    func testAMissingKnownHostsFileNamedOnTheCommandLineIsAnErrorNotNoFindings() throws {
        let run = try ProgramRun.run(BuiltProducts.fleettrust, ["tidy", "--known-hosts", scratch + "/typo", "--no-history"])
        XCTAssertEqual(run.status, 64)
        XCTAssertEqual(run.stderrText, "fleettrust: tidy: \(scratch)/typo: no such file (given as the known_hosts file)\n")
        XCTAssertFalse(run.stdoutText.contains("no findings"))
    }
}
