import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// `fleettrust discover [::1]:PORT` against a real sshd listening on IPv6 loopback.
final class DiscoverIPv6Tests: XCTestCase {
    private var directory = ""
    private var sshd: SpawnedProcess?
    private var port = 0
    private var hostKey: HostKey?

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("ft-discover-v6-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
        let keyPath = directory + "/ssh_host_ed25519_key"
        try Tool.check("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", keyPath])
        hostKey = try HostKey(openSSHLine: String(contentsOfFile: keyPath + ".pub", encoding: .utf8))
        port = try Loopback.freePort()
        let config = directory + "/sshd_config"
        try """
            ListenAddress [::1]:\(port)
            HostKey \(keyPath)
            PidFile none
            UsePAM no
            StrictModes no
            PasswordAuthentication no
            KbdInteractiveAuthentication no
            AuthorizedKeysFile none

            """.write(toFile: config, atomically: true, encoding: .utf8)
        let log = directory + "/sshd.log"
        let process = try SpawnedProcess("/usr/sbin/sshd", ["-D", "-e", "-f", config], stderrPath: log)
        sshd = process
        let deadline = Date().addingTimeInterval(10)
        while !((try? String(contentsOfFile: log, encoding: .utf8))?.contains("Server listening") ?? false) {
            guard process.isRunning, Date() < deadline else {
                throw XCTSkip("sshd could not listen on [::1]:\(port): \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            }
            usleep(10_000)
        }
    }

    override func tearDownWithError() throws {
        sshd?.terminate()
        try? FileManager.default.removeItem(atPath: directory)
    }

    func testBracketedIPv6TargetYieldsKnownHostsLinesThatSshAccepts() throws {
        let run = try ProgramRun.run(BuiltProducts.fleettrust, ["discover", "--format", "known-hosts", "[::1]:\(port)"], limit: 60)
        XCTAssertEqual(run.status, 0, run.stderrText)
        let key = try XCTUnwrap(hostKey)
        XCTAssertEqual(run.stdoutText, "[::1]:\(port) \(key.openSSHLine)\n")
        let file = directory + "/known_hosts"
        try run.stdoutText.write(toFile: file, atomically: true, encoding: .utf8)
        let ssh = try SSHOracle.check(name: "::1", port: port, knownHosts: file)
        XCTAssertEqual(ssh.verdict, .trusted, ssh.transcript)
    }
}
