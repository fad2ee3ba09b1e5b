import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// Recorded scan documents written by someone else (a scanner in another network, a merged
/// estate) are input, not truth: whatever a document says besides the keys it proved, its
/// replay must come out no quieter than the real `ssh` with this machine's files.
final class HostileRecordingTests: XCTestCase {
    private func fleettrust(_ arguments: [String]) throws -> ProgramRun {
        try ProgramRun.run(BuiltProducts.fleettrust, arguments, limit: 90)
    }

    /// Every host entry of `document` (a scan JSON file) rewritten by `edit`, saved to `path`.
    private func forge(_ document: String, to path: String, _ edit: (inout [String: Any]) -> Void) throws {
        var root = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: document))) as? [String: Any])
        var hosts = try XCTUnwrap(root["hosts"] as? [[String: Any]])
        for index in hosts.indices { edit(&hosts[index]) }
        root["hosts"] = hosts
        try JSONSerialization.data(withJSONObject: root).write(to: URL(fileURLWithPath: path))
    }

    func testARecordingCannotChooseTheKnownHostsFilesItIsJudgedAgainst() throws {
        let fleet = try TestFleet.start(hosts: 4)
        defer { fleet.stop() }
        let changed = fleet.hosts[3]
        XCTAssertEqual(try SSHOracle.check(name: changed.address, port: changed.port, knownHosts: fleet.knownHostsPath).verdict, .changed)
        let recorded = fleet.directory + "/recorded.json"
        let scan = try fleettrust(["scan", "--inventory", fleet.inventoryPath, "--known-hosts", fleet.knownHostsPath,
                                   "--no-history", "--format", "json", "--output", recorded])
        XCTAssertEqual(scan.status, 2, scan.stderrText)

        let settings: [(String, [String: Any])] = [
            ("no files", ["no_user_known_hosts_file": true, "global_known_hosts_files": [String]()]),
            ("an empty file of its choosing", ["user_known_hosts_files": ["/dev/null"], "global_known_hosts_files": ["/dev/null"]]),
        ]
        for (what, forged) in settings {
            let hostile = fleet.directory + "/hostile.json"
            try forge(recorded, to: hostile) { host in
                var ssh = host["ssh"] as? [String: Any] ?? [:]
                ssh.merge(forged) { $1 }
                host["ssh"] = ssh
            }
            let replay = try fleettrust(["scan", "--replay", hostile, "--known-hosts", fleet.knownHostsPath, "--format", "json"])
            let document = try XCTUnwrap(try? RecordedScan.decode(Data(replay.stdout)), replay.stderrText)
            XCTAssertEqual(document.hosts[3].status, .changed, "\(what): ssh says changed with this machine's files")
            XCTAssertEqual(replay.status, 2, what)
            let lines = try fleettrust(["scan", "--replay", hostile, "--known-hosts", fleet.knownHostsPath, "--format", "known-hosts"])
            for key in changed.publicKeys {
                XCTAssertFalse(lines.stdoutText.contains(String(key.openSSHLine.split(separator: " ")[1])), "\(what): the key ssh refuses is not offered for appending:\n\(lines.stdoutText)")
            }
        }
    }

    func testAForgedFingerprintHidesNoSplitViewFromMerge() throws {
        let fleet = try TestFleet.start(hosts: 1)
        defer { fleet.stop() }
        let host = fleet.hosts[0]
        let label = host.endpoints[0].label
        try "\(label)\n".write(toFile: fleet.directory + "/inventory.txt", atomically: true, encoding: .utf8)
        func scan(_ scanner: String) throws {
            let run = try fleettrust(["scan", "--inventory", fleet.directory + "/inventory.txt", "--known-hosts", fleet.directory + "/none",
                                      "--no-history", "--format", "json", "--scanner-name", scanner, "--output", fleet.directory + "/\(scanner).json"])
            XCTAssertEqual(run.status, 1, run.stderrText)
        }
        try scan("east")
        try fleet.rekey(host: 0)
        try scan("west")
        // West's network saw other keys; its report claims east's fingerprints for them.
        let east = try RecordedScan.decode(Data(contentsOf: URL(fileURLWithPath: fleet.directory + "/east.json")))
        let claimed = Dictionary(east.hosts[0].keys.map { ($0.type, $0.fingerprint) }, uniquingKeysWith: { first, _ in first })
        try forge(fleet.directory + "/west.json", to: fleet.directory + "/west.json") { entry in
            entry["keys"] = (entry["keys"] as? [[String: Any]] ?? []).map { key in
                var key = key
                if let type = key["type"] as? String, let fingerprint = claimed[type] { key["fingerprint"] = fingerprint }
                return key
            }
        }
        let merged = fleet.directory + "/merged.json"
        let merge = try fleettrust(["merge", "--output", merged, fleet.directory + "/east.json", fleet.directory + "/west.json"])
        XCTAssertEqual(merge.status, 0, merge.stderrText)
        XCTAssertEqual(merge.stderrText, "fleettrust: split view: \(label) port \(host.port): east, west proved different keys\n")
        let document = try RecordedScan.decode(Data(contentsOf: URL(fileURLWithPath: merged)))
        for entry in document.hosts {
            for key in entry.keys {
                XCTAssertEqual(key.fingerprint, try HostKey(openSSHLine: key.key).sha256Fingerprint, "the merged document fingerprints the key itself")
            }
        }
    }
}

extension HostileRecordingTests {
    func testAReportWritingAnotherScannersNameIsRefusedByMerge() throws {
        let fleet = try TestFleet.start(hosts: 1)
        defer { fleet.stop() }
        let label = fleet.hosts[0].endpoints[0].label
        try "\(label)\n".write(toFile: fleet.directory + "/inventory.txt", atomically: true, encoding: .utf8)
        for scanner in ["east", "west"] {
            let run = try fleettrust(["scan", "--inventory", fleet.directory + "/inventory.txt", "--known-hosts", fleet.directory + "/none",
                                      "--no-history", "--format", "json", "--scanner-name", scanner, "--output", fleet.directory + "/\(scanner).json"])
            XCTAssertEqual(run.status, 1, run.stderrText)
            if scanner == "east" { try fleet.rekey(host: 0) }
        }
        // West's network saw other keys; its report claims to be east, whose view then seems one.
        try forge(fleet.directory + "/west.json", to: fleet.directory + "/west.json") { $0["scanned_from"] = "east" }
        let merged = fleet.directory + "/merged.json"
        let merge = try fleettrust(["merge", "--output", merged, fleet.directory + "/east.json", fleet.directory + "/west.json"])
        XCTAssertEqual(merge.status, 64, merge.stderrText)
        XCTAssertEqual(merge.stderrText, "fleettrust: \(fleet.directory)/west.json: hosts[0]: scanner \"east\" also wrote \(fleet.directory)/east.json; "
                       + "each scanner's name must come from one report (give each scanner its own --scanner-name)\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: merged), "nothing is written")
    }
}

extension HostileRecordingTests {
    func testAReportWithAnEndlessLineIsRefusedWithoutReadingItWhole() throws {
        let directory = NSTemporaryDirectory() + "ft-endless-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The layout's first line, then 512 MiB without a line break (a sparse file: no disk used).
        let report = directory + "/report.json"
        try Data("{\n".utf8).write(to: URL(fileURLWithPath: report))
        XCTAssertEqual(truncate(report, 512 << 20), 0)
        let merge = try fleettrust(["merge", "--output", directory + "/merged.json", report])
        XCTAssertEqual(merge.status, 64, merge.stderrText)
        XCTAssertTrue(merge.stderrText.contains("a line is longer than 16777216 bytes"), merge.stderrText)
        XCTAssertLessThan(merge.maxResidentKilobytes, 200 * 1024, "the line is refused at the limit, not read whole")
    }
}

extension HostileRecordingTests {
    func testMergeRefusesATimeItsReplayWouldRefuseSoOneReportCannotBlockTheCentralJudgement() throws {
        let fleet = try TestFleet.start(hosts: 1)
        defer { fleet.stop() }
        let good = fleet.directory + "/good.json"
        let scan = try fleettrust(["scan", "--inventory", fleet.inventoryPath, "--known-hosts", fleet.knownHostsPath, "--no-history",
                                   "--format", "json", "--scanner-name", "good", "--output", good])
        XCTAssertEqual(scan.status, 0, scan.stderrText)
        let cases: [(String, (inout [String: Any]) -> Void, String)] = [
            ("scanned_at", { $0["scanned_at"] = "yesterday" }, "hosts[0] (\(fleet.hosts[0].endpoints[0].label)): scanned_at is not an RFC 3339 UTC time"),
            ("generated_at", { $0["scanned_at"] = nil }, "generated_at is not an RFC 3339 UTC time"),
        ]
        for (what, edit, message) in cases {
            let bad = fleet.directory + "/bad.json"
            try forge(good, to: bad) { entry in
                edit(&entry)
                entry["scanned_from"] = "bad"
            }
            var root = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: bad))) as? [String: Any])
            root["generated_at"] = "\u{1b}[2Jsoon"
            try JSONSerialization.data(withJSONObject: root).write(to: URL(fileURLWithPath: bad))
            let merged = fleet.directory + "/merged.json"
            let merge = try fleettrust(["merge", "--output", merged, good, bad])
            XCTAssertEqual(merge.status, 64, "\(what): \(merge.stderrText)")
            XCTAssertEqual(merge.stderrText, "fleettrust: \(bad): \(message)\n", what)
        }
    }
}

/// A recording replayed on another machine is judged under that machine's ssh configuration, as
/// the `ssh` run there would judge the host: its `RevokedHostKeys` revokes a recorded key.
final class ReplayUnderThisMachinesConfigurationTests: XCTestCase {
    func testReplayAppliesThisMachinesRevokedHostKeysAsSshDoes() throws {
        let fleet = try TestFleet.start(hosts: 1)
        defer { fleet.stop() }
        let host = fleet.hosts[0]
        let recorded = fleet.directory + "/scanner.json"
        let scan = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--inventory", fleet.inventoryPath, "--known-hosts", fleet.knownHostsPath,
                                                                 "--ssh-config", "/dev/null", "--no-history", "--format", "json", "--output", recorded], limit: 90)
        XCTAssertEqual(scan.status, 0, scan.stderrText)
        let revoked = fleet.directory + "/revoked_keys"
        try host.publicKeys.map { $0.openSSHLine + "\n" }.joined().write(toFile: revoked, atomically: true, encoding: .utf8)
        let config = fleet.directory + "/central_ssh_config"
        try "Host *\n  RevokedHostKeys \(revoked)\n".write(toFile: config, atomically: true, encoding: .utf8)
        let oracle = try SSHOracle.check(name: host.address, port: host.port, knownHosts: fleet.knownHostsPath,
                                         extraOptions: ["-o", "RevokedHostKeys=\(revoked)"])
        XCTAssertEqual(oracle.verdict, .revoked, "ssh under this configuration refuses the revoked key")

        let replay = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--replay", recorded, "--known-hosts", fleet.knownHostsPath,
                                                                   "--ssh-config", config, "--format", "json"], limit: 90)
        let document = try XCTUnwrap(try? RecordedScan.decode(Data(replay.stdout)), replay.stderrText)
        XCTAssertEqual(document.hosts.map(\.status), [.revoked], "replayed under this machine's configuration, as ssh judges")
        XCTAssertEqual(replay.status, 2)
    }
}
