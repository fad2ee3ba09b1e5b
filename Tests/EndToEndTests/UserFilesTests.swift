import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// The files fleettrust writes are the user's, and the files it reads cannot crash it: an audit
/// record on a full disk is written whole or not at all, `--output` keeps the report's mode,
/// owner and symlink, and inventories nested 100,000 deep are refused by the real binary with
/// their file and line.
final class UserFilesTests: XCTestCase {
    private var scratch: StoreFaultScratch!

    override func setUpWithError() throws {
        scratch = try StoreFaultScratch()
    }

    override func tearDown() {
        if let scratch { try? FileManager.default.removeItem(atPath: scratch.path) }
    }

    private func fleettrust(_ arguments: [String]) throws -> ProgramRun {
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = scratch.path
        environment["XDG_CONFIG_HOME"] = scratch.path
        environment["XDG_STATE_HOME"] = scratch.file("state")
        return try ProgramRun.run(BuiltProducts.fleettrust, arguments, limit: 60, environment: environment)
    }

    /// A known_hosts with one duplicate line, long enough (a 6,000-byte comment) that its audit
    /// record cannot fit in what is left of a page of a full file system.
    private func knownHostsWithALongDuplicate() throws -> String {
        let line = "dup.example \(StoreFaultScratch.sampleKeyLine) \(String(repeating: "c", count: 6_000))\n"
        try scratch.write("known_hosts", line + line)
        return scratch.file("known_hosts")
    }

    func testAnAuditRecordThatDoesNotFitOnAFullDiskIsCutBackWholeAndNamesNoSpace() throws {
        try FileManager.default.createDirectory(atPath: scratch.file("small"), withIntermediateDirectories: false)
        let mount = try Tool.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", scratch.file("small")])
        try XCTSkipIf(mount.status != 0, "tmpfs mount not permitted here: \(mount.stderr)")
        defer { _ = try? Tool.run("/usr/bin/umount", [scratch.file("small")]) }
        let earlier = "{\"action\":\"trust\",\"earlier\":true}\n"
        try scratch.write("small/audit.jsonl", earlier)
        fill(scratch.file("small/filler"))

        let full = try fleettrust(["tidy", "--known-hosts", try knownHostsWithALongDuplicate(), "--fix", "--kind", "duplicate",
                                   "--yes", "--audit-log", scratch.file("small/audit.jsonl")])
        XCTAssertTrue(full.stderrText.contains("audit log \(scratch.file("small/audit.jsonl")): no space left on device"),
                      full.stderrText)
        XCTAssertEqual(scratch.text("small/audit.jsonl"), earlier, "the half-written record was cut back off")

        // Room again, and an older writer's unfinished line: the next record is a line of its own.
        unlink(scratch.file("small/filler"))
        try scratch.write("small/audit.jsonl", earlier + "{\"unfinished\":")
        let roomy = try fleettrust(["tidy", "--known-hosts", try knownHostsWithALongDuplicate(), "--fix", "--kind", "duplicate",
                                    "--yes", "--audit-log", scratch.file("small/audit.jsonl")])
        XCTAssertEqual(roomy.status, 0, roomy.stderrText)
        let lines = scratch.text("small/audit.jsonl").split(separator: "\n")
        XCTAssertEqual(lines.count, 3, scratch.text("small/audit.jsonl"))
        let record = try JSONSerialization.jsonObject(with: Data(try XCTUnwrap(lines.last).utf8)) as? [String: Any]
        XCTAssertEqual(record?["action"] as? String, "tidy")
        XCTAssertTrue(scratch.text("small/audit.jsonl").hasSuffix("\n"))
    }

    func testOutputKeepsTheReportsModeAndOwnerAndWritesThroughASymlink() throws {
        try scratch.write("hosts", "h1.example\n")
        try scratch.write("report.json", "old report\n")
        chmod(scratch.file("report.json"), 0o640)
        chown(scratch.file("report.json"), 1234, 1234)
        symlink("report.json", scratch.file("link.json"))
        let run = try fleettrust(["scan", "--dry-run", "--inventory", scratch.file("hosts"), "--format", "json",
                                  "--output", scratch.file("link.json")])
        XCTAssertEqual(run.status, 0, run.stderrText)
        let link = scratch.status("link.json"), report = scratch.status("report.json")
        XCTAssertEqual(link.st_mode & S_IFMT, S_IFLNK, "the symlink is kept")
        XCTAssertEqual(report.st_mode & 0o7777, 0o640, "the report's mode is kept")
        XCTAssertEqual([report.st_uid, report.st_gid], [1234, 1234], "the report's owner is kept")
        XCTAssertTrue(scratch.text("report.json").contains("\"dry_run\""), scratch.text("report.json"))
        XCTAssertEqual(scratch.entries(), ["hosts", "link.json", "report.json"], "no temporary file left")

        // A dangling link: the new report is made at its target, with a redirection's mode.
        symlink("new.json", scratch.file("dangling.json"))
        let fresh = try fleettrust(["scan", "--dry-run", "--inventory", scratch.file("hosts"), "--format", "json",
                                    "--output", scratch.file("dangling.json")])
        XCTAssertEqual(fresh.status, 0, fresh.stderrText)
        XCTAssertEqual(scratch.status("dangling.json").st_mode & S_IFMT, S_IFLNK)
        XCTAssertTrue(scratch.text("new.json").contains("\"dry_run\""))
    }

    func testInventoriesNestedAHundredThousandDeepAreRefusedWithTheirFileAndLine() throws {
        let depth = 100_000
        let open = String(repeating: "[", count: depth), close = String(repeating: "]", count: depth)
        try scratch.write("deep.json", "{\"all\": {\"hosts\": \(open)\(close)}}\n")
        try scratch.write("deep.yaml", "all:\n  hosts:\n    web1:\n      x: \(open)\(close)\n")
        // Quoted closers that a bracket counter would take for the end of a level.
        try scratch.write("quoted.json", "{\"all\": {\"hosts\": \(String(repeating: "[\"]\",", count: depth))\(close)}}\n")
        try scratch.write("quoted.yaml", "all:\n  vars:\n    x: \(String(repeating: "[']', ", count: depth))\(close)\n")
        try scratch.write("script", "#!/usr/bin/python3\nprint('{\"all\": {\"hosts\": ' + '[' * \(depth) + ']' * \(depth) + '}}')\n")
        chmod(scratch.file("script"), 0o755)
        // A script whose --list has no _meta: each host's variables come from --host, nested as deep.
        try scratch.write("hostscript", "#!/usr/bin/python3\nimport sys\nif sys.argv[1] == '--list': print('{\"all\": [\"web1\"]}')\n"
                          + "else: print('{\"x\": ' + '[' * \(depth) + ']' * \(depth) + '}')\n")
        chmod(scratch.file("hostscript"), 0o755)
        for (file, shown) in [("deep.json", "deep.json:1:"), ("deep.yaml", "deep.yaml:4:"), ("quoted.json", "quoted.json:1:"),
                              ("quoted.yaml", "quoted.yaml:3:"), ("script", "script --list:1:"),
                              ("hostscript", "hostscript --host web1:1:")] {
            let run = try fleettrust(["scan", "--dry-run", "--inventory", scratch.file(file)])
            // The --host script still lists web1, without the variables it could not read.
            XCTAssertEqual(run.status, file == "hostscript" ? 1 : 64, "\(file): \(run.stderrText)")
            XCTAssertTrue(run.stderrText.contains("\(scratch.file(shown)) nested more than 500 levels deep; file skipped"),
                          "\(file): \(run.stderrText)")
        }
    }

    func testAHostRangeUpToTheLargestIntegerIsRefusedNotATrap() throws {
        try scratch.write("hosts.ini", "[web]\nweb[0:9223372036854775807]\nweb[01:99999999999]\nok.example\n")
        let run = try fleettrust(["scan", "--dry-run", "--inventory", scratch.file("hosts.ini"), "--format", "json"])
        XCTAssertEqual(run.status, 1, "skipped entries, no crash: \(run.stderrText)")
        XCTAssertTrue(run.stderrText.contains("hosts.ini:2: range in 'web[0:9223372036854775807]' expands to more than"), run.stderrText)
        XCTAssertTrue(run.stderrText.contains("hosts.ini:3:"), run.stderrText)
        XCTAssertTrue(run.stdoutText.contains("ok.example"), run.stdoutText)
    }

    /// Writes until the file system is full.
    private func fill(_ path: String) {
        let fd = open(path, O_WRONLY | O_CREAT, 0o600)
        defer { close(fd) }
        for size in [1024, 1] {
            let block = [UInt8](repeating: 0x41, count: size)
            while block.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        }
    }
}
