import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// `fleettrust discover` as a user runs it, against a real sshd fleet, with ssh-keygen and ssh as oracles.
final class DiscoverCommandTests: XCTestCase {
    private static let fleet = Result { try TestFleet.start(hosts: 2) }

    override class func tearDown() {
        if case .success(let fleet) = fleet { fleet.stop() }
        super.tearDown()
    }

    private func discover(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let run = try ProgramRun.run(BuiltProducts.fleettrust, ["discover"] + arguments, limit: 60)
        return (run.status, run.stdoutText, run.stderrText)
    }

    func testPrintsTypeFingerprintAndKeyLineMatchingSshKeygenForEveryKey() throws {
        let fleet = try Self.fleet.get()
        let output = try discover(fleet.hosts.map(\.endpoints[0].label))
        XCTAssertEqual(output.status, 0, output.stderr)
        let lines = output.stdout.split(separator: "\n")
        for host in fleet.hosts {
            let mine = lines.filter { $0.hasPrefix(host.endpoints[0].label + " ") }
            XCTAssertEqual(mine.count, host.publicKeyFiles.count + (host.certificate == nil ? 0 : 1), host.name)
            for file in host.publicKeyFiles + [host.certificateFile].compactMap({ $0 }) {
                let oracle = try Tool.check("/usr/bin/ssh-keygen", ["-lf", file]).split(separator: " ")
                let key = try HostKey(openSSHLine: String(contentsOfFile: file, encoding: .utf8))
                let expected = "\(host.endpoints[0].label) \(key.type) \(oracle[0]) \(oracle[1]) \(key.openSSHLine)"
                XCTAssertTrue(mine.contains { $0 == expected }, "missing \(expected)\nin:\n\(output.stdout)")
            }
        }
    }

    /// Two lines of a -f file for one server: the warning names both lines.
    func testTheSameKeysFromTwoLinesOfAFileNameTheLines() throws {
        let fleet = try Self.fleet.get()
        let file = NSTemporaryDirectory() + "discover-dup-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: file) }
        let label = fleet.hosts[0].endpoints[0].label
        try "# targets\n\(label)\n\(fleet.hosts[1].endpoints[0].label)\n\(label)\n".write(toFile: file, atomically: true, encoding: .utf8)
        let output = try discover(["-f", file])
        XCTAssertTrue(output.stderr.contains("\(label) (\(file):2), \(label) (\(file):4) present the same host keys"), output.stderr)
    }

    func testKnownHostsOutputGetsSshPastHostKeyCheckingAndLeavesCertificatesOut() throws {
        let fleet = try Self.fleet.get()
        let host = try XCTUnwrap(fleet.hosts.first { $0.certificate != nil })
        let output = try discover(["--format", "known-hosts", host.endpoints[0].label])
        XCTAssertEqual(output.status, 0, output.stderr)
        XCTAssertEqual(output.stdout.split(separator: "\n").count, 3)
        XCTAssertFalse(output.stdout.contains("-cert-v01@openssh.com"))
        XCTAssertTrue(output.stdout.hasPrefix("[\(host.address)]:\(host.port) "), output.stdout)
        let file = fleet.directory + "/discovered_known_hosts"
        try output.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        let ssh = try SSHOracle.check(name: host.address, port: host.port, knownHosts: file)
        XCTAssertEqual(ssh.verdict, .trusted, ssh.transcript)
        XCTAssertTrue(ssh.transcript.contains("Permission denied"), ssh.transcript)
    }

    func testClosedAndSilentPortsEachPrintOneClearLineAndExitOne() throws {
        let fleet = try Self.fleet.get()
        let silent = try SilentListener()
        defer { silent.close() }
        let closed = try Loopback.freePort()
        let start = ContinuousClock.now
        let output = try discover(["--timeout", "2", "127.0.0.1:\(closed)", "127.0.0.1:\(silent.port)",
                                   fleet.hosts[1].endpoints[0].label])
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(7))
        XCTAssertEqual(output.status, 1)
        XCTAssertEqual(output.stdout.split(separator: "\n").count, 3, "the reachable host is still reported")
        let errors = output.stderr.split(separator: "\n")
        XCTAssertEqual(errors.count, 2, output.stderr)
        XCTAssertTrue(errors.contains { $0.contains("127.0.0.1:\(closed): connect failed: connection refused") }, output.stderr)
        XCTAssertTrue(errors.contains { $0.contains("127.0.0.1:\(silent.port): banner failed:") && $0.contains("banner-timeout") },
                      output.stderr)
    }

    func testBadTargetsAndOptionsExitWithUsageStatus() throws {
        // ssh-keyscan options discover does not have are refused, as its page says.
        let keyscanOnly = ["-4", "-6", "-c", "-D", "-O", "-v"].map { [$0, "127.0.0.1:1"] }
        for arguments in [["[::1"], ["host:99999"], ["--timeout", "0", "host"], []] + keyscanOnly {
            let output = try discover(arguments)
            XCTAssertEqual(output.status, 64, "\(arguments): \(output.stderr)")
        }
    }
}
