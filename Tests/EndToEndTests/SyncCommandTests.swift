import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// `fleettrust sync` against the real fleet, with the real `ssh` deciding whether what it wrote
/// (and what it refused to touch) is what `ssh` then accepts.
final class SyncCommandTests: XCTestCase {
    private func sync(_ arguments: [String]) throws -> ProgramRun {
        try ProgramRun.run(BuiltProducts.fleettrust, ["sync"] + arguments, limit: 90)
    }

    private func verdict(_ host: TestFleet.Host, _ knownHosts: String) throws -> SSHOracle.Verdict {
        try SSHOracle.check(name: host.address, port: host.port, knownHosts: knownHosts).verdict
    }

    private func auditRecords(_ path: String) throws -> [[String: Any]] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return try text.split(separator: "\n").map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    func testAKnownHostsFileThatDoesNotExistIsRefusedUnlessCreateIsGiven() throws {
        let fleet = try TestFleet.start(hosts: 3)
        defer { fleet.stop() }
        let typo = fleet.directory + "/known_hsots"
        let refused = try sync(["--inventory", fleet.inventoryPath, "--known-hosts", typo, "--trust-on-first-use",
                                "--hash-known-hosts", "no", "--audit-log", fleet.directory + "/audit.jsonl"])
        XCTAssertEqual(refused.status, 64, refused.stderrText)
        XCTAssertTrue(refused.stderrText.contains("\(typo): no such known_hosts file"), refused.stderrText)
        XCTAssertTrue(refused.stderrText.contains("--create"), refused.stderrText)
        XCTAssertFalse(FileManager.default.fileExists(atPath: typo), "a mistyped path was created")

        let created = try sync(["--inventory", fleet.inventoryPath, "--known-hosts", typo, "--trust-on-first-use", "--create",
                                "--hash-known-hosts", "no", "--audit-log", fleet.directory + "/audit.jsonl"])
        XCTAssertEqual(created.status, 0, created.stderrText)
        XCTAssertEqual(try verdict(fleet.hosts[1], typo), .trusted, "with --create the new file is written as asked")
    }

    /// The audit log opens its file by the rule every writer follows: another user's link in a
    /// sticky world-writable directory is not followed.
    func testTheAuditLogRefusesAnotherUsersLinkInASharedDirectory() throws {
        guard geteuid() == 0 else { throw XCTSkip("planting another user's link needs root (lchown)") }
        let fleet = try TestFleet.start(hosts: 3)
        defer { fleet.stop() }
        let knownHosts = fleet.directory + "/synced_known_hosts"
        try FileManager.default.copyItem(atPath: fleet.knownHostsPath, toPath: knownHosts)
        let before = try String(contentsOfFile: knownHosts, encoding: .utf8)
        let victim = fleet.directory + "/victim", shared = fleet.directory + "/shared"
        try "the user's own file\n".write(toFile: victim, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        XCTAssertEqual(chmod(shared, 0o1777), 0)
        XCTAssertEqual(symlink(victim, shared + "/audit.jsonl"), 0)
        XCTAssertEqual(lchown(shared + "/audit.jsonl", 12_345, 12_345), 0)
        let run = try sync(["--inventory", fleet.inventoryPath, "--known-hosts", knownHosts, "--trust-on-first-use",
                            "--hash-known-hosts", "no", "--audit-log", shared + "/audit.jsonl"])
        XCTAssertEqual(run.status, 1, run.stderrText)
        XCTAssertTrue(run.stderrText.contains("symbolic link another user made in a shared directory"), run.stderrText)
        XCTAssertEqual(try String(contentsOfFile: victim, encoding: .utf8), "the user's own file\n")
        // The log is checked before the user's file is written: a change nobody can audit is not made.
        XCTAssertTrue(run.stderrText.contains("no known_hosts file was written"), run.stderrText)
        XCTAssertEqual(try String(contentsOfFile: knownHosts, encoding: .utf8), before, "sync wrote known_hosts it could not audit")
    }

    /// Hosts 0-4 play the sample roles (trusted by CA, trusted, new, changed, revoked); host 5
    /// is new as well. Only host 2 is pinned, so only host 2 is added.
    func testAddsOnlyPinProvedNewHostsAndNeverTouchesChangedOrRevoked() throws {
        let fleet = try TestFleet.start(hosts: 6)
        defer { fleet.stop() }
        let knownHosts = fleet.directory + "/synced_known_hosts"
        try FileManager.default.copyItem(atPath: fleet.knownHostsPath, toPath: knownHosts)
        let before = try Data(contentsOf: URL(fileURLWithPath: knownHosts))
        let pins = fleet.directory + "/pins"
        try "\(fleet.hosts[2].knownHostsName) \(fleet.hosts[2].publicKeys[0].sha256Fingerprint)\n"
            .write(toFile: pins, atomically: true, encoding: .utf8)
        let audit = fleet.directory + "/audit.jsonl"
        let arguments = ["--inventory", fleet.inventoryPath, "--known-hosts", knownHosts, "--pins", pins,
                         "--hash-known-hosts", "no", "--audit-log", audit]

        let run = try sync(arguments)
        XCTAssertEqual(run.status, 2, "changed and revoked hosts are reported with exit 2\n\(run.stderrText)")
        XCTAssertTrue(run.stdoutText.contains("added \(fleet.hosts[2].endpoints[0].label)"), run.stdoutText)
        XCTAssertTrue(run.stdoutText.contains("(proved by pin)"), run.stdoutText)
        XCTAssertTrue(run.stderrText.contains("\(fleet.hosts[3].endpoints[0].label) (\(fleet.hosts[3].endpoints[0].label)): not touched: changed"),
                      run.stderrText)
        XCTAssertTrue(run.stderrText.contains("not touched: revoked"), run.stderrText)
        XCTAssertTrue(run.stderrText.contains("\(fleet.hosts[5].endpoints[0].label)): not added: new, and no pin proves its keys"),
                      run.stderrText)
        let after = try Data(contentsOf: URL(fileURLWithPath: knownHosts))
        XCTAssertEqual(after.prefix(before.count), before, "every existing byte kept; the changed and revoked lines untouched")
        let added = String(decoding: after.dropFirst(before.count), as: UTF8.self)
        XCTAssertEqual(added.split(separator: "\n").map(String.init), ["\(fleet.hosts[2].knownHostsName) \(fleet.hosts[2].publicKeys[0].openSSHLine)"],
                       "a pin proves only the key it names: the host's other keys are not saved as proved by it")

        XCTAssertEqual(try verdict(fleet.hosts[2], knownHosts), .trusted, "ssh accepts the synced host")
        XCTAssertEqual(try verdict(fleet.hosts[5], knownHosts), .unknown, "the unpinned host was not added")
        XCTAssertEqual(try verdict(fleet.hosts[3], knownHosts), .changed)
        XCTAssertEqual(try verdict(fleet.hosts[4], knownHosts), .revoked)

        let records = try auditRecords(audit)
        XCTAssertEqual(records.count, 1)
        XCTAssertEqual(records.first?["action"] as? String, "sync")
        XCTAssertEqual(records.first?["host"] as? String, fleet.hosts[2].endpoints[0].label)
        XCTAssertEqual(records.first?["outcome"] as? String, "saved")
        XCTAssertEqual(records.first?["new_fingerprints"] as? [String], [fleet.hosts[2].publicKeys[0].sha256Fingerprint])
        XCTAssertEqual(records.first?["names"] as? [String], [fleet.hosts[2].knownHostsName])

        let again = try sync(arguments)
        XCTAssertEqual(again.status, 2)
        XCTAssertEqual(again.stdoutText, "", "nothing written, nothing on standard output")
        XCTAssertTrue(again.stderrText.contains("fleettrust: sync: nothing changed; 3 already trusted"), again.stderrText)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: knownHosts)), after, "a second run changes nothing")
        XCTAssertEqual(try auditRecords(audit).count, 1)
    }

    /// `--check` prints exactly the lines the real run then appends, writes nothing, and exits 1
    /// while it would change anything; a second run is a no-op with exit 0 when every host ends trusted.
    func testCheckShowsTheDiffThenTrustOnFirstUseAddsItAndASecondRunIsANoOp() throws {
        let fleet = try TestFleet.start(hosts: 3)
        defer { fleet.stop() }
        let knownHosts = fleet.directory + "/tofu_known_hosts"
        try FileManager.default.copyItem(atPath: fleet.knownHostsPath, toPath: knownHosts)
        let before = try Data(contentsOf: URL(fileURLWithPath: knownHosts))
        let audit = fleet.directory + "/audit.jsonl"
        let arguments = ["--inventory", fleet.inventoryPath, "--known-hosts", knownHosts, "--hash-known-hosts", "no", "--audit-log", audit]

        let unpinned = try sync(arguments + ["--check"])
        XCTAssertEqual(unpinned.status, 1, "the new host has no pin")
        XCTAssertEqual(unpinned.stdoutText, "")
        XCTAssertTrue(unpinned.stderrText.contains("nothing would change"), unpinned.stderrText)

        let check = try sync(arguments + ["--check", "--trust-on-first-use"])
        XCTAssertEqual(check.status, 1, "--check exits 1 when it would change anything: \(check.stderrText)")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: knownHosts)), before, "--check writes nothing")
        XCTAssertFalse(FileManager.default.fileExists(atPath: audit), "--check audits nothing")
        let diff = check.stdoutText.split(separator: "\n").map(String.init)
        XCTAssertEqual(Array(diff.prefix(2)), ["--- \(knownHosts)", "+++ \(knownHosts)"])
        XCTAssertTrue(check.stderrText.contains("would add 1 host (1 key)"), check.stderrText)
        XCTAssertTrue(check.stderrText.contains("would add \(fleet.hosts[2].endpoints[0].label) (\(fleet.hosts[2].endpoints[0].label)): 1 key "),
                      "--check names the hosts it would add: \(check.stderrText)")

        let run = try sync(arguments + ["--trust-on-first-use"])
        XCTAssertEqual(run.status, 0, run.stderrText)
        XCTAssertTrue(run.stdoutText.contains("(proved by trust on first use)"), run.stdoutText)
        let after = try Data(contentsOf: URL(fileURLWithPath: knownHosts))
        let added = String(decoding: after.dropFirst(before.count), as: UTF8.self).split(separator: "\n").map { "+" + $0 }
        XCTAssertEqual(added, Array(diff.dropFirst(2)), "the diff is what was written")
        XCTAssertEqual(try verdict(fleet.hosts[2], knownHosts), .trusted)

        let again = try sync(arguments + ["--trust-on-first-use"])
        XCTAssertEqual(again.status, 0)
        XCTAssertEqual(try sync(arguments + ["--check", "--trust-on-first-use"]).status, 0, "nothing would change")
        XCTAssertEqual(again.stdoutText, "")
        // The summary of a run and of --check: the same stream, the same form.
        XCTAssertTrue(again.stderrText.hasSuffix("fleettrust: sync: nothing changed; 3 already trusted\n"), again.stderrText)
        XCTAssertTrue(check.stderrText.contains("fleettrust: sync --check: would add 1 host (1 key)"), check.stderrText)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: knownHosts)), after)
        XCTAssertEqual(try auditRecords(audit).map { $0["action"] as? String }, ["sync"])
    }

    /// A certificate from a pinned CA proves the host: its plain keys are added (hashed, as
    /// asked), and the real `ssh` accepts it from them alone.
    func testAPinnedCAProvesANewHostAndHashedNamesAreFoundBySsh() throws {
        let fleet = try TestFleet.start(hosts: 1)
        defer { fleet.stop() }
        let host = fleet.hosts[0]
        let knownHosts = fleet.directory + "/empty_known_hosts"
        let pins = fleet.directory + "/ca-pins"
        try "\(host.knownHostsName) ca:\(fleet.caPublicKey.sha256Fingerprint)\n".write(toFile: pins, atomically: true, encoding: .utf8)
        let arguments = ["--inventory", fleet.inventoryPath, "--known-hosts", knownHosts, "--create", "--pins", pins,
                         "--hash-known-hosts", "yes", "--audit-log", fleet.directory + "/audit.jsonl"]
        let run = try sync(arguments)
        XCTAssertEqual(run.status, 0, run.stderrText)
        XCTAssertTrue(run.stdoutText.contains("(proved by pinned CA)"), run.stdoutText)
        let lines = try String(contentsOfFile: knownHosts, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, 1, "the pinned CA proves only the key its certificate certifies")
        XCTAssertTrue(lines.allSatisfy { $0.hasPrefix("|1|") && !$0.contains("-cert-v01@openssh.com") }, lines.joined(separator: "\n"))
        XCTAssertEqual(try verdict(host, knownHosts), .trusted)
    }

    func testBadUsageExits64() throws {
        XCTAssertEqual(try sync([]).status, 64)
        XCTAssertEqual(try sync(["--inventory", "/nonexistent/inventory"]).status, 64)
        XCTAssertEqual(try sync(["--inventory", "/dev/null", "--hash-known-hosts", "sometimes"]).status, 64)
    }
}
