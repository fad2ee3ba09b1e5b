import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// What fleettrust writes for saving is found by the real `ssh` under the name it looks up: for
/// targets spelled as `ssh` canonicalises them (`127.1`, decimal, hex or octal IPv4 literals, an
/// upper-case name, bracketed IPv6 literals) and for ssh_config hosts with `HostKeyAlias`.
/// Every line is checked on its own, with `ssh` restricted to that line's key type, so a line
/// `ssh` would never meet today still has to be right.
final class LookupNameSavingTests: XCTestCase {
    private var sshd: LoopbackSSHD?
    private var scratch = ""

    override func setUpWithError() throws {
        scratch = NSTemporaryDirectory() + "lookup-saving-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        sshd = try LoopbackSSHD()
    }

    override func tearDown() {
        sshd?.stop()
        try? FileManager.default.removeItem(atPath: scratch)
    }

    /// The host-key algorithm that makes `ssh` meet a key of this type.
    private static func algorithm(for type: String) -> String {
        type == "ssh-rsa" ? "rsa-sha2-512" : type
    }

    /// Parses `NAME TYPE BASE64` lines; fails the test on anything else.
    private func knownHostsLines(_ text: String, _ what: String) -> [(name: String, key: HostKey, line: String)] {
        text.split(separator: "\n").filter { !$0.hasPrefix("# ") }.compactMap { line -> (String, HostKey, String)? in
            let fields = line.split(separator: " ", maxSplits: 1)
            guard fields.count == 2, let key = try? HostKey(openSSHLine: String(fields[1])) else {
                XCTFail("\(what): not a known_hosts line: \(line)")
                return nil
            }
            return (String(fields[0]), key, String(line))
        }
    }

    func testEveryLineDiscoverWritesIsFoundBySSHUnderTheNameItLooksUp() throws {
        let sshd = try XCTUnwrap(sshd)
        // (as spelled for fleettrust, as given to ssh): ssh canonicalises address literals (any inet_aton
        // form) and lower-cases names before it looks them up.
        var targets = [("127.1", "127.1"), ("2130706433", "2130706433"), ("0x7f000001", "0x7f000001"), ("0177.0.0.1", "0177.0.0.1"),
                       ("LOCALHOST", "LOCALHOST")]
        if sshd.listensOnIPv6 {
            targets += [("[::1]", "::1"), ("[0:0:0:0:0:0:0:1]", "0:0:0:0:0:0:0:1")]
        }
        for (spelled, sshName) in targets {
            let target = "\(spelled):\(sshd.port)"
            let run = try ProgramRun.run(BuiltProducts.fleettrust, ["discover", "--format", "known-hosts", "--timeout", "10", target], limit: 60)
            XCTAssertEqual(run.status, 0, "discover \(target): \(run.stderrText)")
            let lines = knownHostsLines(run.stdoutText, "discover \(target)")
            XCTAssertEqual(Set(lines.map(\.key.openSSHLine)), Set(sshd.publicKeys.map(\.openSSHLine)),
                           "discover \(target) writes one line per host key:\n\(run.stdoutText)")
            for entry in lines {
                let file = scratch + "/known_hosts-\(UUID().uuidString.prefix(8))"
                try (entry.line + "\n").write(toFile: file, atomically: true, encoding: .utf8)
                let outcome = try SSHOracle.check(name: sshName, port: sshd.port, knownHosts: file,
                                                  extraOptions: ["-o", "HostKeyAlgorithms=\(Self.algorithm(for: entry.key.type))"])
                XCTAssertEqual(outcome.verdict, .trusted,
                               "ssh -p \(sshd.port) \(sshName) does not find the line discover wrote for \(target): \(entry.line)\n"
                               + outcome.transcript.split(separator: "\n").filter { !$0.hasPrefix("debug1: Reading") }.suffix(12).joined(separator: "\n"))
            }
        }
        // After every IPv4 spelling was checked: the IPv6 ones were not.
        if !sshd.listensOnIPv6 { throw XCTSkip("sshd does not listen on [::1] here; the IPv6 spellings are not checked") }
    }

    func testTheLineScanWritesForAHostKeyAliasIsAcceptedBySSHThroughTheSameConfig() throws {
        let sshd = try XCTUnwrap(sshd)
        let knownHosts = scratch + "/known_hosts"
        try "".write(toFile: knownHosts, atomically: true, encoding: .utf8)
        let config = scratch + "/ssh_config"
        try """
            Host lower-alias
              HostName 127.0.0.1
              Port \(sshd.port)
              HostKeyAlias fleet-alias.example
            Host mixed-alias
              HostName 127.1
              Port \(sshd.port)
              HostKeyAlias Mixed-Case.Alias.Example
            Host *
              UserKnownHostsFile \(knownHosts)
              GlobalKnownHostsFile /dev/null

            """.write(toFile: config, atomically: true, encoding: .utf8)
        let run = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "known-hosts", "--inventory", config,
                                                                "--inventory-format", "ssh-config", "--known-hosts", knownHosts,
                                                                "--hash-known-hosts", "no", "--timeout", "10", "--trust-on-first-use"],
                                     limit: 60)
        XCTAssertEqual(run.status, 1, "two new hosts: exit 1\n\(run.stderrText)")
        let lines = knownHostsLines(run.stdoutText, "scan --format known-hosts")
        // First use saves the key ssh meets (Ed25519 first), as StrictHostKeyChecking=accept-new does.
        let meets = sshd.publicKeys.filter { $0.type == "ssh-ed25519" }
        XCTAssertEqual(lines.count, 2 * meets.count, "one line per host, the key ssh meets:\n\(run.stdoutText)")
        let aliases = ["lower-alias": "fleet-alias.example", "mixed-alias": "mixed-case.alias.example"]
        for (host, alias) in aliases.sorted(by: { $0.key < $1.key }) {
            let mine = lines.filter { $0.name.lowercased() == alias }
            XCTAssertEqual(Set(mine.map(\.key.openSSHLine)), Set(meets.map(\.openSSHLine)),
                           "\(host): the key ssh meets under its HostKeyAlias \(alias):\n\(run.stdoutText)")
            for entry in mine {
                let file = scratch + "/known_hosts-\(UUID().uuidString.prefix(8))"
                try (entry.line + "\n").write(toFile: file, atomically: true, encoding: .utf8)
                let outcome = try SSHOracle.handshake(host: host, config: config,
                                                      extraOptions: ["UserKnownHostsFile=\(file)",
                                                                     "HostKeyAlgorithms=\(Self.algorithm(for: entry.key.type))"])
                XCTAssertEqual(outcome.finding, .accepted, "ssh -F config \(host) does not accept the line scan wrote: \(entry.line)\n"
                               + "\(outcome.finalMessage)\n\(outcome.transcript.suffix(1500))")
            }
        }
    }
}
