import Foundation
import XCTest
import FleetTrustTestFleet
@testable import FleetTrustCore

/// `KnownHostsCommand`: its command line split and expanded as OpenSSH 9.2's `argv_split` and
/// `percent_dollar_expand` do it; the runner's bounds, with real scripts; and the judge reading
/// the lines as `ssh` does (for `[host]:port` and the CheckHostIP address, never for the
/// bare-name retry), a failure an error, and no output (a replay) unchecked.
final class KnownHostsCommandJudgeTests: XCTestCase {
    func testCommandLineIsSplitAsArgvSplitSplitsItWithoutAShell() {
        XCTAssertEqual(KnownHostsCommand.split(#"/bin/kh  'a b' "c\"d" e\ f g\h\#t$(x);|"#),
                       ["/bin/kh", "a b", "c\"d", "e f", "g\\h", "$(x);|"])
        XCTAssertEqual(KnownHostsCommand.split(#"/bin/kh "it's" 'x"y'"#), ["/bin/kh", "it's", "x\"y"])
        XCTAssertNil(KnownHostsCommand.split("/bin/kh 'open"), "ssh: contains invalid quotes")
        XCTAssertEqual(KnownHostsCommand.split("   "), [])
    }

    func testOnlyArgumentsAfterTheFirstAreExpandedAndAnUnknownTokenStops() throws {
        let values: [Character: String] = ["h": "web1", "H": "[web1]:2222", "K": "AAAA"]
        XCTAssertEqual(try KnownHostsCommand.arguments(["/kh/%h", "%h", "%H=%K", "100%%", "${FT_KH}"], values: values,
                                                       environment: ["FT_KH": "v"]),
                       ["/kh/%h", "web1", "[web1]:2222=AAAA", "100%", "v"])
        XCTAssertThrowsError(try KnownHostsCommand.arguments(["/kh", "%z"], values: values, environment: [:]))
        XCTAssertThrowsError(try KnownHostsCommand.arguments(["/kh", "50%"], values: values, environment: [:]))
        XCTAssertThrowsError(try KnownHostsCommand.arguments(["/kh", "${FT_KH_UNSET}"], values: values, environment: [:]))
    }

    func testFingerprintHashChangesTheFingerprintTheCommandIsGivenAsSshKeygenPrintsIt() throws {
        XCTAssertEqual(KnownHostsCommandRunner.fingerprint(TestKeys.a, digest: nil), TestKeys.a.sha256Fingerprint)
        XCTAssertEqual(KnownHostsCommandRunner.fingerprint(TestKeys.a, digest: "MD5"), TestKeys.a.md5Fingerprint)
        let inventory = InventoryFixtures.read(text: "Host a\n  FingerprintHash sha512\nHost b\n  FingerprintHash crc32\n", name: "cfg",
                                               format: .sshConfig)
        XCTAssertEqual(inventory["a"]?.sshOptions.fingerprintHash, "SHA512")
        XCTAssertEqual(inventory.errors.map(\.description), ["cfg:4: FingerprintHash: invalid hash algorithm 'crc32'; ignored"])
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ft-kh-fp-\(getpid()).pub").path
        try "\(TestKeys.a.openSSHLine)\n".write(toFile: file, atomically: true, encoding: .utf8)
        defer { unlink(file) }
        let keygen = try Tool.run("/usr/bin/ssh-keygen", ["-E", "sha512", "-lf", file]).stdout
        XCTAssertTrue(keygen.contains(KnownHostsCommandRunner.fingerprint(TestKeys.a, digest: "SHA512") + " "), keygen)
    }

    private func host(_ template: String, port: Int = 22, checkHostIP: Bool = false) -> InventoryHost {
        var options = SSHHostOptions(checkHostIP: checkHostIP)
        options.knownHostsCommand = KnownHostsCommand(template: template, location: SourceLocation(file: "cfg", line: 3),
                                                      hostArgument: "web")
        return InventoryHost(name: "web", address: "web.example", port: port, sshOptions: options)
    }

    private func script(_ body: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ft-kh-\(getpid())-\(UUID().uuidString.prefix(8)).sh").path
        try "#!/bin/sh\n\(body)\n".write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        addTeardownBlock { unlink(path) }
        return path
    }

    func testTheRunnerIsBoundedInTimeAndOutputAndNeedsAnAbsolutePath() throws {
        let probe = ProbeResult(host: "web", port: 22, peerAddress: "192.0.2.7", keys: [DiscoveredKey(key: TestKeys.a)])
        let slow = try script("sleep 30")
        let started = ContinuousClock.now
        let timedOut = try XCTUnwrap(KnownHostsCommandRunner(timeout: .seconds(1)).run(for: host(slow), result: probe))
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(8), "two runs of at most a second each, then the kill")
        XCTAssertTrue(timedOut.failure?.failure?.contains("did not finish within 1 s") == true, "\(timedOut.runs)")

        let beforeStopped = ContinuousClock.now
        XCTAssertNil(KnownHostsCommandRunner().run(for: host(slow), result: probe) { true }, "a stopped scan runs nothing")
        XCTAssertLessThan(ContinuousClock.now - beforeStopped, .seconds(1))

        let loud = try script("head -c 1100000 /dev/zero")
        let tooMuch = try XCTUnwrap(KnownHostsCommandRunner().run(for: host(loud), result: probe))
        XCTAssertTrue(tooMuch.failure?.failure?.contains("printed more than 1048576 bytes") == true, "\(tooMuch.runs)")

        let relative = try XCTUnwrap(KnownHostsCommandRunner().run(for: host("kh.sh %H"), result: probe))
        XCTAssertTrue(relative.failure?.failure?.hasPrefix("is not an absolute path") == true, "\(relative.runs)")
    }

    func testAddressRunOnlyWhereCheckHostIPAppliesAndNeverForACommandReadFromAReport() throws {
        let echo = try script(#"echo "$1 $2""#)
        let probe = ProbeResult(host: "web", port: 22, peerAddress: "192.0.2.7", keys: [DiscoveredKey(key: TestKeys.a)])
        let output = try XCTUnwrap(KnownHostsCommandRunner().run(for: host("\(echo) %I %H", checkHostIP: true), result: probe))
        XCTAssertEqual(output.runs.map { String(decoding: $0.output, as: UTF8.self) },
                       ["ORDER web.example\n", "HOSTNAME web.example\n", "ADDRESS 192.0.2.7\n"])
        var loopback = probe
        loopback.peerAddress = "127.0.0.1"
        XCTAssertEqual(KnownHostsCommandRunner().run(for: host("\(echo) %I %H", checkHostIP: true), result: loopback)?.address, [nil],
                       "ssh turns CheckHostIP off for a loopback peer")

        var explicit = host("\(echo) %I %H")
        explicit.sshOptions.hostKeyAlgorithms = try SSHAlgorithmList.parse("ssh-ed25519", known: HostKeyAlgorithms.openSSHKnown).get()
        XCTAssertNil(KnownHostsCommandRunner().run(for: explicit, result: probe)?.order,
                     "ssh reorders (and runs ORDER) only when HostKeyAlgorithms is unset, + or -")

        var replayed = host("\(echo) %I")
        let data = try JSONEncoder().encode(replayed.sshOptions)
        replayed.sshOptions = try JSONDecoder().decode(SSHHostOptions.self, from: data)
        XCTAssertEqual(replayed.sshOptions.knownHostsCommand?.template, "\(echo) %I")
        XCTAssertEqual(replayed.sshOptions.knownHostsCommand?.location, SourceLocation(file: "cfg", line: 3))
        XCTAssertEqual(replayed.sshOptions.knownHostsCommand?.isRunnable, false)
        XCTAssertNil(KnownHostsCommandRunner().run(for: replayed, result: probe), "a command read from a report is never run")
    }

    private func judged(_ lines: String, files: String = "", port: Int = 22, failure: String? = nil,
                        address: String? = nil) -> JudgedHost {
        let host = host("/kh", port: port, checkHostIP: address != nil)
        var probe = ProbeResult(host: "web", port: port, peerAddress: "192.0.2.7", keys: [DiscoveredKey(key: TestKeys.a)])
        probe.knownHostsCommand = KnownHostsCommandOutput(
            order: KnownHostsCommandRun(invocation: .order, arguments: ["/kh"]),
            hostName: [KnownHostsCommandRun(invocation: .hostName, arguments: ["/kh"], output: Array(lines.utf8), failure: failure)],
            address: [address.map { KnownHostsCommandRun(invocation: .address, arguments: ["/kh"], output: Array($0.utf8)) }])
        return FleetJudge(knownHosts: KnownHosts(files: [TestKeys.file(files)]), pins: nil).judge(host, probe)
    }

    func testTheCommandsLinesAreJudgedWithTheFilesAsSshJudgesThem() {
        XCTAssertEqual(judged("web.example \(TestKeys.a.openSSHLine)\n").status, .trusted)
        XCTAssertEqual(judged("web.example \(TestKeys.b.openSSHLine)\n").status, .changed)
        XCTAssertEqual(judged("web.example \(TestKeys.b.openSSHLine)\n", files: "web.example \(TestKeys.a.openSSHLine)\n").status, .trusted,
                       "one line with the key is enough, wherever it is")
        XCTAssertEqual(judged("").status, .new)
        XCTAssertEqual(judged("web.example \(TestKeys.a.openSSHLine)\n", port: 2222).status, .new,
                       "a line for the bare name counts only in the retry, which runs no command")
        XCTAssertEqual(judged("[web.example]:2222 \(TestKeys.a.openSSHLine)\n", port: 2222).status, .trusted)
        XCTAssertEqual(judged("@revoked * \(TestKeys.a.openSSHLine)\n", files: "web.example \(TestKeys.a.openSSHLine)\n").status, .revoked)
        XCTAssertEqual(judged("web.example \(TestKeys.a.openSSHLine)\n", address: "192.0.2.7 \(TestKeys.b.openSSHLine)\n").status, .changed,
                       "CheckHostIP: the address is recorded with another key")
    }

    func testAFailedCommandIsTheHostsErrorUnlessLouderEvidenceStandsAndNoOutputIsUnchecked() {
        let failed = judged("", files: "web.example \(TestKeys.a.openSSHLine)\n", failure: "exited with status 1, and ssh fails the connection for it")
        XCTAssertEqual(failed.status, .error)
        XCTAssertEqual(failed.failure?.stage, .hostKey)
        XCTAssertEqual(failed.failure?.message.value, "KnownHostsCommand /kh (%I=HOSTNAME) exited with status 1, and ssh fails the connection for it")
        XCTAssertEqual(judged("", files: "web.example \(TestKeys.b.openSSHLine)\n", failure: "exited with status 1").status, .changed)

        let replayed = FleetJudge(knownHosts: KnownHosts(files: [TestKeys.file("web.example \(TestKeys.a.openSSHLine)\n")]), pins: nil)
            .judge(host("/kh"), ProbeResult(host: "web", port: 22, keys: [DiscoveredKey(key: TestKeys.a)]))
        XCTAssertEqual(replayed.status, .unchecked)
        XCTAssertEqual(JudgementWords.reason(replayed),
                       "not judged: KnownHostsCommand (cfg:3): the command was not run for this judgement (a replayed scan runs none), and ssh reads the keys it prints (ssh's answer under this setting is not reproduced)")
    }
}
