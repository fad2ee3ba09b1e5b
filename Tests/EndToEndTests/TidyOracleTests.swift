import Foundation
import XCTest
import FleetTrustTestFleet

/// `fleettrust tidy` on crafted known_hosts files for a real sshd, with `ssh-keygen -F` and
/// `ssh -o StrictHostKeyChecking=yes` as the oracle for what each line matches: a line tidy
/// calls unmatchable is never used, both lines of a conflicting pair are accepted by ssh, a
/// hashed+plain duplicate both match, and `--fix --kind duplicate --yes` removes exactly that line;
/// a plain line a `@revoked` line revokes does not make ssh accept the host (nor does removing it
/// make ssh stop refusing); a line no inventory lookup name finds is never what ssh uses; one key
/// under unrelated names authenticates the server under each of them.
final class TidyOracleTests: XCTestCase {
    private var directory = ""
    private var sshd: SpawnedProcess?
    private var port = 0
    /// `ssh-ed25519 BASE64` of the key the sshd serves, and of a key nobody serves.
    private var realKey = ""
    private var otherKey = ""
    private var lookupName: String { "[127.0.0.1]:\(port)" }

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "ft-tidy-oracle-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
        try KeyFiles.generate(type: "ed25519", path: directory + "/host")
        try KeyFiles.generate(type: "ed25519", path: directory + "/other")
        realKey = try KeyFiles.line(publicKeyFile: directory + "/host.pub")
        otherKey = try KeyFiles.line(publicKeyFile: directory + "/other.pub")
        port = try Loopback.freePort()
        let config = directory + "/sshd_config"
        try ["ListenAddress 127.0.0.1:\(port)", "HostKey \(directory)/host", "PidFile none", "UsePAM no", "StrictModes no",
             "PasswordAuthentication no", "KbdInteractiveAuthentication no", "AuthorizedKeysFile none", "UseDNS no"]
            .joined(separator: "\n").appending("\n").write(toFile: config, atomically: true, encoding: .utf8)
        let process = try SpawnedProcess("/usr/sbin/sshd", ["-D", "-e", "-f", config], stderrPath: directory + "/sshd.log")
        sshd = process
        let deadline = Date().addingTimeInterval(15)
        while !Loopback.accepts(address: "127.0.0.1", port: port) {
            guard process.isRunning, Date() < deadline else { throw TestFleetError.sshdDidNotStart(String(port)) }
            usleep(10_000)
        }
    }

    override func tearDown() {
        sshd?.terminate()
        try? FileManager.default.removeItem(atPath: directory)
    }

    // MARK: - Helpers

    private func write(_ file: String, _ lines: [String]) throws -> String {
        let path = "\(directory)/\(file)"
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The real key's line for `name`, hashed by `ssh-keygen -H`.
    private func hashedRealKeyLine() throws -> String {
        let path = try write("to-hash", ["\(lookupName) \(realKey)"])
        try Tool.check("/usr/bin/ssh-keygen", ["-q", "-H", "-f", path])
        let line = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").first { $0.hasPrefix("|1|") }
        return String(try XCTUnwrap(line, "ssh-keygen -H wrote no hashed line"))
    }

    /// Real ssh, pinned to the served key's type so the recorded ed25519 lines decide.
    private func ssh(_ knownHosts: String) throws -> SSHOracle.Handshake {
        let outcome = try SSHOracle.check(name: "127.0.0.1", port: port, knownHosts: knownHosts,
                                          extraOptions: ["-o", "HostKeyAlgorithms=ssh-ed25519"])
        return SSHOracle.classifyHandshake(outcome.transcript)
    }

    /// A fresh ed25519 key nobody serves, as `ssh-ed25519 BASE64`.
    private func freshKey(_ label: String, type: String = "ed25519") throws -> String {
        try KeyFiles.generate(type: type, path: "\(directory)/\(label)")
        return try KeyFiles.line(publicKeyFile: "\(directory)/\(label).pub")
    }

    /// The file's bytes without its 1-based line `number`, every other byte kept.
    private func removing(line number: Int, from bytes: Data) -> Data {
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .enumerated().filter { $0.offset != number - 1 }.map { Data($0.element) }
        return Data(lines.joined(separator: [UInt8(ascii: "\n")]))
    }

    /// `ssh-keygen -F name -f file` (default name: the sshd's lookup name): the 1-based numbers
    /// of the lines it reports.
    private func keygenFind(_ knownHosts: String, name: String? = nil) throws -> [Int] {
        let output = try Tool.run("/usr/bin/ssh-keygen", ["-F", name ?? lookupName, "-f", knownHosts]).stdout
        return output.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("# Host "), let range = line.range(of: "found: line ") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
    }

    private struct Finding: Equatable { var line: Int; var kind: String; var names: [String] }

    private func tidy(_ arguments: [String]) throws -> (findings: [Finding], run: ProgramRun) {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = directory + "/state"
        let run = try ProgramRun.run(BuiltProducts.fleettrust, ["tidy", "--no-history", "--format", "json"] + arguments,
                                     limit: 30, environment: environment)
        let object = try XCTUnwrap(try? JSONSerialization.jsonObject(with: Data(run.stdout)) as? [String: Any],
                                   "tidy printed no JSON: \(run.stdoutText) \(run.stderrText)")
        let findings = try XCTUnwrap(object["findings"] as? [[String: Any]]).map { item in
            Finding(line: item["line"] as? Int ?? 0, kind: item["kind"] as? String ?? "",
                    names: (item["names"] as? [String] ?? []).sorted())
        }
        return (findings.sorted { ($0.line, $0.kind) < ($1.line, $1.kind) }, run)
    }

    // MARK: - Tests

    func testLinesTidyCallsUnmatchableAreNeverUsedBySSHOrSSHKeygen() throws {
        XCTAssertEqual(try ssh(try write("control", ["\(lookupName) \(realKey)"])).finding, .accepted, "control: the plain line is accepted")
        let hashed = try hashedRealKeyLine()
        // `|1|SALT|HASH`: keep the real HMAC, give it a 9-byte salt (OpenSSH wants 20).
        let fields = hashed.split(separator: " ")[0].split(separator: "|")
        let badSalt = "|1|c2hvcnRzYWx0|\(fields[2]) \(realKey)"
        let crafted: [(String, String)] = [
            ("bad-salt", badSalt),
            ("negated-only", "!\(lookupName),!127.0.0.1 \(realKey)"),
        ]
        for (label, line) in crafted {
            let path = try write(label, [line])
            let (findings, run) = try tidy(["--known-hosts", path])
            XCTAssertEqual(findings.map(\.kind), ["unmatchable"], "\(label): \(run.stdoutText)")
            XCTAssertEqual(try keygenFind(path), [], "\(label): ssh-keygen -F must not print the line")
            let verdict = try ssh(path)
            XCTAssertEqual(verdict.finding, .unknown, "\(label): ssh must not use the line: \(verdict.finalMessage)")
        }
    }

    func testBothKeysOfAConflictingPairAreAcceptedBySSHAndTidyNamesBothLines() throws {
        for (label, lines) in [("other-first", ["\(lookupName) \(otherKey)", "\(lookupName) \(realKey)"]),
                               ("real-first", ["\(lookupName) \(realKey)", "\(lookupName) \(otherKey)"])] {
            let path = try write(label, lines)
            let verdict = try ssh(path)
            XCTAssertEqual(verdict.finding, .accepted, "\(label): ssh accepts either key: \(verdict.finalMessage)")
            let (findings, run) = try tidy(["--known-hosts", path])
            XCTAssertEqual(findings, [Finding(line: 1, kind: "conflicting", names: [lookupName]),
                                      Finding(line: 2, kind: "conflicting", names: [lookupName])], "\(label): \(run.stdoutText)")
            for other in [1, 2] {
                XCTAssertTrue(run.stdoutText.contains("key at line \(other);"), "\(label): each line names the other: \(run.stdoutText)")
            }
            XCTAssertEqual(run.status, 2)
        }
    }

    /// A pattern line that records another key for a name with its own line is "conflicting";
    /// removing it would make ssh quieter for a host nothing here names (it calls that host
    /// CHANGED through the pattern today): the fix keeps it, and says why.
    func testFixNeverRemovesAPatternLineForAnotherNamesSake() throws {
        let first = try freshKey("first")
        let path = try write("known_hosts", ["[127.0.0.2]:\(port) \(first)", "[127.0.0.?]:\(port) \(otherKey)"])
        XCTAssertEqual(try ssh(path).finding, .changed, "ssh calls the served host changed through the pattern line")
        let (findings, _) = try tidy(["--known-hosts", path])
        XCTAssertEqual(findings.map(\.kind), ["conflicting", "conflicting"])
        let before = try XCTUnwrap(FileManager.default.contents(atPath: path))
        let fixed = try tidy(["--known-hosts", path, "--fix", "--kind", "conflicting", "--yes"])
        XCTAssertTrue(fixed.run.stderrText.contains("kept \(path):2: a pattern line"), fixed.run.stderrText)
        XCTAssertEqual(try XCTUnwrap(FileManager.default.contents(atPath: path)), before, "nothing is removed")
        XCTAssertEqual(try ssh(path).finding, .changed, "ssh decides as before")
    }

    /// Of a conflicting pair, the fix keeps the line holding the key the host proved at its last
    /// scan (the history says which), whichever comes first, and ssh still accepts the host.
    func testFixKeepsTheLineHoldingTheKeyTheHostProves() throws {
        let path = try write("known_hosts", ["\(lookupName) \(otherKey)", "\(lookupName) \(realKey)"])
        let inventory = try write("hosts", ["127.0.0.1:\(port)"])
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = directory + "/state"
        let scan = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--inventory", inventory, "--known-hosts", path],
                                      limit: 60, environment: environment)
        XCTAssertEqual(scan.status, 0, scan.stdoutText + scan.stderrText)
        let fixed = try ProgramRun.run(BuiltProducts.fleettrust, ["tidy", "--known-hosts", path, "--inventory", inventory,
                                                                  "--fix", "--kind", "conflicting", "--yes"],
                                       limit: 30, environment: environment)
        XCTAssertEqual(fixed.status, 0, fixed.stdoutText + fixed.stderrText)
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "\(lookupName) \(realKey)\n", fixed.stdoutText)
        XCTAssertEqual(try ssh(path).finding, .accepted, "ssh still accepts the host after --fix")
    }

    func testHashedAndPlainDuplicateBothMatchAndFixRemovesOnlyTheReportedLine() throws {
        let lines = ["# kept comment", "\(lookupName) \(realKey)", "other.fleet.test \(otherKey)", try hashedRealKeyLine(), ""]
        let path = try write("known_hosts", lines)
        XCTAssertEqual(try keygenFind(path), [2, 4], "ssh-keygen -F finds both the plain and the hashed line")

        let (findings, run) = try tidy(["--known-hosts", path])
        XCTAssertEqual(findings, [Finding(line: 4, kind: "duplicate", names: [lookupName])], run.stdoutText)

        let before = try XCTUnwrap(FileManager.default.contents(atPath: path))
        let fixed = try tidy(["--known-hosts", path, "--fix", "--kind", "duplicate", "--yes"])
        XCTAssertEqual(fixed.findings, [], fixed.run.stdoutText + fixed.run.stderrText)
        XCTAssertEqual(fixed.run.status, 0, fixed.run.stderrText)
        XCTAssertEqual(try XCTUnwrap(FileManager.default.contents(atPath: path)), removing(line: 4, from: before),
                       "only line 4 is removed; every other byte is kept")
        XCTAssertEqual(try keygenFind(path), [2])
        XCTAssertEqual(try ssh(path).finding, .accepted, "ssh still accepts the host after --fix")
    }

    func testRevokedRecordedLineDoesNotMakeSSHAcceptAndFixKeepsTheNamesLastPlainLine() throws {
        let path = try write("known_hosts", ["# kept comment", "\(lookupName) \(realKey)", "other.fleet.test \(otherKey)",
                                             "@revoked \(lookupName) \(realKey)"])
        XCTAssertEqual(try keygenFind(path), [2, 4], "ssh-keygen -F finds the plain line (and the @revoked one)")
        let verdict = try ssh(path)
        XCTAssertEqual(verdict.finding, .revoked, "ssh refuses although line 2 records the key: \(verdict.finalMessage)")
        XCTAssertTrue(verdict.transcript.contains("Host key verification failed"), verdict.transcript)

        let (findings, run) = try tidy(["--known-hosts", path])
        XCTAssertEqual(findings, [Finding(line: 2, kind: "revoked-recorded", names: [lookupName])], run.stdoutText)
        XCTAssertTrue(run.stdoutText.contains("revoked by the @revoked line at line 4"), run.stdoutText)
        XCTAssertEqual(run.status, 2, "a revoked-recorded finding exits 2")

        // Line 2 is the name's only plain line: without it a different key would be new to ssh, not
        // changed. So it is only reported: --fix neither offers it nor refuses it afterwards.
        let before = try XCTUnwrap(FileManager.default.contents(atPath: path))
        let fixed = try tidy(["--known-hosts", path, "--fix", "--kind", "revoked-recorded", "--yes"])
        XCTAssertEqual(fixed.findings, findings, fixed.run.stdoutText + fixed.run.stderrText)
        XCTAssertEqual(fixed.run.status, 2, fixed.run.stderrText)
        XCTAssertFalse(fixed.run.stderrText.contains("\(path):2:") || fixed.run.stdoutText.contains("will be removed"),
                       "never offers a line it would refuse: \(fixed.run.stdoutText)\(fixed.run.stderrText)")
        XCTAssertFalse(fixed.run.stderrText.contains("\(path):4:"), "never offers the @revoked line: \(fixed.run.stderrText)")
        XCTAssertEqual(try XCTUnwrap(FileManager.default.contents(atPath: path)), before, "nothing is removed")
        XCTAssertEqual(try ssh(path).finding, .revoked, "ssh still refuses the host")

        // With another plain line for the name (a second key type), the revoked one goes and only it.
        let second = try freshKey("second", type: "ecdsa")
        let path2 = try write("known_hosts2", ["# kept comment", "\(lookupName) \(realKey)", "\(lookupName) \(second)",
                                               "@revoked \(lookupName) \(realKey)"])
        let before2 = try XCTUnwrap(FileManager.default.contents(atPath: path2))
        let fixed2 = try tidy(["--known-hosts", path2, "--fix", "--kind", "revoked-recorded", "--yes"])
        XCTAssertEqual(fixed2.findings, [], fixed2.run.stdoutText + fixed2.run.stderrText)
        XCTAssertEqual(fixed2.run.status, 0, fixed2.run.stderrText)
        XCTAssertEqual(try XCTUnwrap(FileManager.default.contents(atPath: path2)), removing(line: 2, from: before2),
                       "only line 2 is removed; the @revoked line and every other byte are kept")
        XCTAssertEqual(try keygenFind(path2), [2, 3], "the other key's line and the @revoked line are left")
        XCTAssertEqual(try ssh(path2).finding, .revoked, "ssh still refuses the revoked key")
    }

    func testLinesNoInventoryLookupNameFindsAreUnknownHostsAndTheHostsOwnLinesAreNot() throws {
        let inventory = try write("hosts", ["127.0.0.1:\(port)"])
        // A name of another host, another address on the port, and the `host:port` spelling ssh never looks up.
        let stale = [("stale.example", try freshKey("stale1")), ("[127.0.0.9]:\(port)", try freshKey("stale2")),
                     ("127.0.0.1:\(port)", try freshKey("stale3"))]
        let path = try write("known_hosts", ["\(lookupName) \(realKey)"] + stale.map { "\($0.0) \($0.1)" })
        // ssh looks the host up as [127.0.0.1]:PORT, then retries the bare 127.0.0.1.
        XCTAssertEqual(try keygenFind(path), [1], "the host's own line only")
        XCTAssertEqual(try keygenFind(path, name: "127.0.0.1"), [], "no stale line under the bare name")
        for (index, (name, _)) in stale.enumerated() {
            XCTAssertEqual(try keygenFind(path, name: name), [index + 2], "\(name): the stale line is valid and matches its own name")
        }
        let verdict = try ssh(path)
        XCTAssertEqual(verdict.finding, .accepted, verdict.finalMessage)
        XCTAssertTrue(verdict.transcript.contains("Found key in \(path):1"), "ssh uses the host's own line: \(verdict.transcript)")

        let (findings, run) = try tidy(["--known-hosts", path, "--inventory", inventory])
        XCTAssertEqual(findings, stale.enumerated().map { Finding(line: $0.offset + 2, kind: "unknown-host", names: [$0.element.0]) },
                       run.stdoutText)
        XCTAssertEqual(run.status, 1, run.stderrText)

        // Control: the bare name ssh retries is a name the host uses.
        let bare = try write("bare", ["127.0.0.1 \(realKey)"])
        let bareVerdict = try ssh(bare)
        XCTAssertEqual(bareVerdict.finding, .accepted, bareVerdict.finalMessage)
        XCTAssertTrue(bareVerdict.transcript.contains("found matching key w/out port"), bareVerdict.transcript)
        let control = try tidy(["--known-hosts", bare, "--inventory", inventory])
        XCTAssertEqual(control.findings, [], control.run.stdoutText)
        XCTAssertEqual(control.run.status, 0, control.run.stderrText)
    }

    func testOneKeyUnderUnrelatedNamesIsSharedButNotUnderOneHostsNames() throws {
        let unrelated = try write("unrelated", ["\(lookupName) \(realKey)", "unrelated.example \(realKey)"])
        for (line, name) in [(1, lookupName), (2, "unrelated.example")] {
            let output = try Tool.run("/usr/bin/ssh-keygen", ["-F", name, "-f", unrelated]).stdout
            XCTAssertEqual(try keygenFind(unrelated, name: name), [line], output)
            XCTAssertTrue(output.contains("\(name) \(realKey)"), "ssh-keygen -F \(name) prints the same key: \(output)")
        }
        XCTAssertEqual(try ssh(unrelated).finding, .accepted, "the key is the server's")
        let (findings, run) = try tidy(["--known-hosts", unrelated])
        XCTAssertEqual(findings, [Finding(line: 1, kind: "shared-key", names: [lookupName]),
                                  Finding(line: 2, kind: "shared-key", names: ["unrelated.example"])], run.stdoutText)
        for (name, other) in [(lookupName, 2), ("unrelated.example", 1)] {
            XCTAssertTrue(run.stdoutText.contains("the key of \(name) is also recorded for unrelated hosts at line \(other)"), run.stdoutText)
        }
        XCTAssertEqual(run.status, 1, run.stderrText)

        // One host with and without its port: ssh accepts the server through the bare line too.
        let ported = try write("ported", ["\(lookupName) \(realKey)", "127.0.0.1 \(realKey)"])
        XCTAssertEqual(try ssh(try write("bare", ["127.0.0.1 \(realKey)"])).finding, .accepted)
        let portedRun = try tidy(["--known-hosts", ported])
        XCTAssertEqual(portedRun.findings, [], portedRun.run.stdoutText)
        XCTAssertEqual(portedRun.run.status, 0, portedRun.run.stderrText)

        // One inventory host's alias: ssh looks the host up under its HostKeyAlias.
        let config = try write("ssh_config", ["Host web1", "  HostName 127.0.0.1", "  Port \(port)", "  HostKeyAlias alias.example"])
        let aliased = try write("aliased", ["alias.example \(realKey)", "\(lookupName) \(realKey)"])
        let viaAlias = try SSHOracle.handshake(host: "web1", config: config, extraOptions: [
            "UserKnownHostsFile=\(aliased)", "GlobalKnownHostsFile=/dev/null", "HostKeyAlgorithms=ssh-ed25519"])
        XCTAssertEqual(viaAlias.finding, .accepted, viaAlias.finalMessage)
        XCTAssertTrue(viaAlias.transcript.contains("Found key in \(aliased):1"), viaAlias.transcript)
        XCTAssertTrue(try ssh(aliased).transcript.contains("Found key in \(aliased):2"), "and under its address")
        let withInventory = try tidy(["--known-hosts", aliased, "--inventory", config, "--inventory-format", "ssh-config"])
        XCTAssertEqual(withInventory.findings, [], withInventory.run.stdoutText + withInventory.run.stderrText)
        XCTAssertEqual(withInventory.run.status, 0, withInventory.run.stderrText)
        let withoutInventory = try tidy(["--known-hosts", aliased])
        XCTAssertEqual(withoutInventory.findings.map(\.kind), ["shared-key", "shared-key"], "without the inventory the names are unrelated")
    }
}
