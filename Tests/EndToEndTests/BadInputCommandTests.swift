import Foundation
import XCTest
import FleetTrustTestFleet

/// Every subcommand of the real binary, given bad usage or an input it cannot use, answers with
/// exit status 64 and one line on standard error that names the file (and line), never a
/// Foundation error domain nor a doubled program name.
final class BadInputCommandTests: XCTestCase {
    private var root: String!

    override func setUpWithError() throws {
        root = NSTemporaryDirectory() + "ft-bad-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: root + "/adir", withIntermediateDirectories: true)
        chmod(root, 0o755)
        try write("inv.ini", "h1 ansible_host=127.0.0.1\n")
        try write("empty", "")
        try write("badpins", "# team pins\ngarbage line here\n")
        try write("badpolicy", "# policies\n\n* weird\n")
        try write("unreadable", "h1\n")
        chmod(root + "/unreadable", 0)
        try Data([0x7B, 0x00, 0x01, 0x02]).write(to: URL(fileURLWithPath: root + "/blob"))
    }

    override func tearDown() {
        if let root { try? FileManager.default.removeItem(atPath: root) }
    }

    private func write(_ name: String, _ text: String) throws {
        try text.write(toFile: root + "/" + name, atomically: true, encoding: .utf8)
    }

    /// Runs the binary without a terminal. As root (where mode 000 does not stop a read) it runs
    /// as `nobody` through `setpriv`, so that an unreadable file really is unreadable.
    private func fleettrust(_ arguments: [String]) throws -> ProgramRun {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = root
        environment["HOME"] = root
        guard geteuid() == 0 else {
            return try ProgramRun.run(BuiltProducts.fleettrust, arguments, limit: 60, environment: environment)
        }
        return try ProgramRun.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups",
                                                       BuiltProducts.fleettrust] + arguments, limit: 60, environment: environment)
    }

    private func assertOneSentence(_ arguments: [String], naming expected: [String], status: Int32 = 64,
                                   file: StaticString = #filePath, line: UInt = #line) throws {
        let run = try fleettrust(arguments)
        let label = arguments.joined(separator: " ")
        XCTAssertEqual(run.status, status, "\(label): \(run.stderrText)", file: file, line: line)
        XCTAssertEqual(run.stderrText.filter { $0 == "\n" }.count, 1, "\(label): \(run.stderrText)", file: file, line: line)
        XCTAssertTrue(run.stderrText.hasPrefix("fleettrust: "), "\(label): \(run.stderrText)", file: file, line: line)
        for word in expected {
            XCTAssertTrue(run.stderrText.contains(word), "\(label): \(run.stderrText) lacks \(word)", file: file, line: line)
        }
        for forbidden in ["Error Domain", "NSCocoaErrorDomain", "fleettrust: fleettrust:", "Usage:"] {
            XCTAssertFalse(run.stderrText.contains(forbidden), "\(label): \(run.stderrText)", file: file, line: line)
        }
    }

    func testAMissingSSHConfigurationIsNamedAsSuchAndDevNullReadsAsNone() throws {
        let inventory = ["--inventory", root + "/inv.ini", "--dry-run"]
        try assertOneSentence(["scan", "--ssh-config", root + "/nope"] + inventory,
                              naming: [root + "/nope", "no such file (given as the ssh configuration)"])
        let none = try fleettrust(["scan", "--ssh-config", "/dev/null"] + inventory)
        XCTAssertEqual(none.status, 0, none.stderrText)
    }

    func testEveryBadLineOfAPinOrPolicyFileIsALineOfItsOwn() throws {
        try write("twobadpins", "web1 SHA256:short\nweb2 nonsense\n")
        try write("twobadpolicies", "web1 nope\nweb2 alsono\n")
        let inventory = ["--inventory", root + "/inv.ini", "--dry-run"]
        for (option, file) in [("--pins", "twobadpins"), ("--policy", "twobadpolicies")] {
            let run = try fleettrust(["scan", option, root + "/" + file] + inventory)
            XCTAssertEqual(run.status, 64, run.stderrText)
            let lines = run.stderrText.split(separator: "\n")
            XCTAssertEqual(lines.count, 2, run.stderrText)
            XCTAssertTrue(lines[0].hasPrefix("fleettrust: " + root + "/\(file):1: "), "\(lines[0])")
            XCTAssertTrue(lines[1].hasPrefix("fleettrust: " + root + "/\(file):2: "), "\(lines[1])")
            XCTAssertFalse(run.stderrText.contains("?" + root), "lines joined by '?': \(run.stderrText)")
        }
    }

    func testUnusableFilesAreOneSentenceNamingTheFileAndExit64() throws {
        let r: String = root
        let inventory = ["scan", "--dry-run", "--inventory", r + "/inv.ini"]
        let key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
        let table: [([String], [String])] = [
            (["scan", "--inventory", r + "/missing"], [r + "/missing", "no such file"]),
            (["scan", "--inventory", r + "/blob"], [r + "/blob", "binary data"]),
            (["scan", "--inventory", r + "/unreadable"], [r + "/unreadable", "Permission denied"]),
            (["scan", "--inventory", r + "/empty"], [r + "/empty", "no hosts"]),
            (["sync", "--check", "--inventory", r + "/adir"], [r + "/adir", "directory"]),
            (inventory + ["--known-hosts", r + "/adir"], [r + "/adir", "is a directory, not a known_hosts file"]),
            (inventory + ["--known-hosts", r + "/unreadable"], [r + "/unreadable", "known_hosts file", "Permission denied"]),
            (inventory + ["--pins", r + "/missing"], [r + "/missing", "no such file", "pin file"]),
            (inventory + ["--pins", r + "/adir"], [r + "/adir", "is a directory, not a pin file"]),
            (inventory + ["--pins", r + "/blob"], [r + "/blob", "binary data"]),
            (inventory + ["--pins", r + "/badpins"], [r + "/badpins:2:"]),
            (inventory + ["--policy", r + "/badpolicy"], [r + "/badpolicy:3:", "weird"]),
            (inventory + ["--policy", r + "/adir"], [r + "/adir", "is a directory, not a policy file"]),
            (["scan", "--replay", r + "/adir"], [r + "/adir", "is a directory, not a recorded scan"]),
            (["scan", "--replay", r + "/blob"], [r + "/blob", "binary data"]),
            (["scan", "--replay", r + "/missing"], [r + "/missing", "no such file"]),
            (["discover", "-f", r + "/adir"], [r + "/adir", "is a directory, not a targets file"]),
            (["discover", "-f", r + "/unreadable"], [r + "/unreadable", "Permission denied"]),
            (["verify", "h", r + "/adir"], [r + "/adir", "is a directory, not a key file"]),
            (["verify", "h", r + "/missing.pub"], [r + "/missing.pub", "no such file (given as the key file)"]),
            (["verify", "h", "ssh-ed25519 AAAAbroken"], ["neither a key file nor a key line"]),
            (["verify", "h", key, "--known-hosts", r + "/adir"], [r + "/adir", "known_hosts file"]),
            (["verify", "h", key, "--pins", r + "/unreadable"], [r + "/unreadable", "pin file"]),
            (["--inventory", r + "/inv.ini", "--theme", r + "/missing.theme"], [r + "/missing.theme", "no such theme file"]),
            (["--inventory", r + "/inv.ini", "--theme", r + "/adir"], [r + "/adir", "is a directory, not a theme file"]),
            (["--inventory", r + "/inv.ini", "--theme", r + "/blob"], [r + "/blob", "binary data"]),
        ]
        for (arguments, expected) in table {
            try assertOneSentence(arguments, naming: expected)
        }
    }

    func testBadUsageIsOneLineWithTheAcceptedValuesAndExit64() throws {
        let inventory = ["--inventory", root + "/inv.ini"]
        let table: [([String], [String])] = [
            ([], ["--inventory"]),
            (["scan"], ["--inventory", "fleettrust scan --help"]),
            (["sync"], ["--inventory"]),
            (["discover"], ["-f"]),
            (["scan", "--timeout", "abc"] + inventory, ["more than 0 and at most 3600"]),
            (["scan", "--timeout", "0"] + inventory, ["more than 0 and at most 3600"]),
            (["--timeout", "99999"] + inventory, ["more than 0 and at most 3600"]),
            (["discover", "-T", "nan", "127.0.0.1"], ["more than 0 and at most 3600"]),
            (["sync", "--timeout", "-3"] + inventory, ["--timeout"]),
            (["scan", "--timeout", "-1"] + inventory, ["'-1'", "more than 0 and at most 3600"]),
            (["discover", "-T", "-1", "127.0.0.1"], ["'-1'", "more than 0 and at most 3600"]),
            (["scan", "--concurrency", "0"] + inventory, ["between 1 and 1024"]),
            (["scan", "--format", "xml"] + inventory, ["'xml'", "'prometheus'"]),
            (["scan", "--pins-mode", "loose"] + inventory, ["enforce or report"]),
            (["scan", "--inventory-format", "toml"] + inventory, ["plain, ini, yaml, json or ssh-config"]),
            (["discover", "-t", "ed448", "127.0.0.1"], ["ed448"]),
            (["verify", "h", "x", "--port", "0"], ["between 1 and 65535"]),
            (["scan", "--bogus"] + inventory, ["--bogus"]),
            (["scan", "--cert-warn-days", "-1"] + inventory, ["--cert-warn-days", "between 0 and 3650"]),
            (["scna"] + inventory, ["unknown command 'scna'", "scan", "tidy", "fleettrust --help"]),
            // A mistyped option is named whatever else is missing or wrong.
            (["scan", "--invntory", "x"], ["Unknown option '--invntory'", "Did you mean '--inventory'?", "fleettrust scan --help"]),
            (["sync", "--invntory", "x"], ["Did you mean '--inventory'?"]),
            (["--invntory", "x"], ["Did you mean '--inventory'?"]),
            (["scan", "--concurrency", "0", "--pinz", "p"] + inventory, ["Unknown option '--pinz'", "Did you mean '--pins'?"]),
            (["tidy", "--fxi"], ["Did you mean '--fix'?"]),
        ]
        for (arguments, expected) in table {
            try assertOneSentence(arguments, naming: expected)
        }
    }

    func testMissingKnownHostsFileIsWarnedAboutOnceAndJudgedEmpty() throws {
        let missing = root + "/no_known_hosts"
        let run = try fleettrust(["scan", "--dry-run", "--inventory", root + "/inv.ini", "--known-hosts", missing, "--known-hosts", missing])
        XCTAssertEqual(run.status, 0, run.stderrText)
        XCTAssertEqual(run.stderrText, "fleettrust: warning: \(missing): no such known_hosts file; judging as if it were empty, as ssh does\n")
        let verify = try fleettrust(["verify", "--known-hosts", missing, "h",
                                     "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"])
        XCTAssertEqual(verify.status, 1, "a key no file knows is new, not an error")
        XCTAssertTrue(verify.stderrText.contains("warning: \(missing): no such known_hosts file"), verify.stderrText)
    }

    func testSkippedEntriesSentenceHasOneProgramName() throws {
        try write("partly.ini", "[web]\ngood ansible_host=127.0.0.1\nbad ansible_port=notaport\n")
        let run = try fleettrust(["scan", "--dry-run", "--inventory", root + "/partly.ini"])
        XCTAssertEqual(run.status, 1, run.stderrText)
        XCTAssertTrue(run.stderrText.contains("fleettrust: skipped 1 inventory entry"), run.stderrText)
        XCTAssertFalse(run.stderrText.contains("fleettrust: fleettrust:"), run.stderrText)
    }

    /// A mistyped `--group` is refused with the groups the inventory has, even beside a right one.
    func testAMistypedGroupIsRefusedNamingTheGroupsThereAre() throws {
        try write("groups.ini", "[web]\nweb1 ansible_host=127.0.0.1\n[db]\ndb1 ansible_host=127.0.0.2\n")
        try assertOneSentence(["scan", "--dry-run", "--inventory", root + "/groups.ini", "--group", "web", "--group", "dbb"],
                              naming: ["no such group in the inventory: dbb", "its groups are web, db"])
        let right = try fleettrust(["scan", "--dry-run", "--inventory", root + "/groups.ini", "--group", "db"])
        XCTAssertEqual(right.status, 0, right.stderrText)
    }

    /// tidy's --no-history says what it does for tidy (which never records), not scan's words.
    func testTidyHelpSaysWhatItsOwnNoHistoryDoes() throws {
        let tidy = try fleettrust(["tidy", "--help"]), scan = try fleettrust(["scan", "--help"])
        XCTAssertTrue(tidy.stdoutText.contains("tidy never records one"), tidy.stdoutText)
        XCTAssertFalse(tidy.stdoutText.contains("Neither read nor record the history"), tidy.stdoutText)
        XCTAssertTrue(scan.stdoutText.contains("Neither read nor record the history"), scan.stdoutText)
    }
}
