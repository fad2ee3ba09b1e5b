import Foundation
import XCTest
import FleetTrustTestFleet

/// `fleettrust tidy` on crafted known_hosts files for a real sshd, with `ssh-keygen -F` and
/// `ssh -o StrictHostKeyChecking=yes` as the oracle for what each line matches: a line tidy
/// calls unmatchable is never used, both lines of a conflicting pair are accepted by ssh, a
/// hashed+plain duplicate both match, and `--fix --kind duplicate --yes` removes exactly that line.
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

    /// `ssh-keygen -F name -f file`: the 1-based numbers of the lines it reports.
    private func keygenFind(_ knownHosts: String) throws -> [Int] {
        let output = try Tool.run("/usr/bin/ssh-keygen", ["-F", lookupName, "-f", knownHosts]).stdout
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
        let expected = before.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .enumerated().filter { $0.offset != 3 }.map { Data($0.element) }
        XCTAssertEqual(try XCTUnwrap(FileManager.default.contents(atPath: path)), Data(expected.joined(separator: [UInt8(ascii: "\n")])),
                       "only line 4 is removed; every other byte is kept")
        XCTAssertEqual(try keygenFind(path), [2])
        XCTAssertEqual(try ssh(path).finding, .accepted, "ssh still accepts the host after --fix")
    }
}
