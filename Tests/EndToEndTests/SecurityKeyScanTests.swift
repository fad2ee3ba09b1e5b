import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// A server whose only host key is a security key (`sk-ssh-ed25519@openssh.com`), scanned by the
/// real binary: recorded, recorded under another key, and revoked, it is trusted, changed and
/// revoked, as the real `ssh` meeting the same server decides (not `error`, as before our client
/// spoke security keys).
final class SecurityKeyScanTests: XCTestCase {
    func testAServerWithOnlyASecurityKeyIsJudgedAsSshJudgesIt() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ft-sk-scan-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        try KeyFiles.generate(type: "ed25519", path: path("host"))
        try KeyFiles.generate(type: "ed25519", path: path("other"))
        let skLine = try KeyFiles.line(publicKeyFile: try KeyFiles.securityKey(privateKeyPath: path("host"), output: path("host-sk.pub")))
        let server = try FakeKeyServer(keys: [FakeHostKey(privateKeyPath: path("host"), presentedBlob: try KeyFiles.blob(publicKeyFile: path("host-sk.pub")),
                                                          algorithms: ["sk-ssh-ed25519@openssh.com"])])
        defer { server.stop() }
        let name = "[127.0.0.1]:\(server.port)"
        let cases: [(String, [String], HostStatus, SSHOracle.Finding)] = [
            ("recorded", ["\(name) \(skLine)"], .trusted, .accepted),
            ("another key recorded", ["\(name) \(try KeyFiles.line(publicKeyFile: path("other.pub")))"], .changed, .changed),
            ("revoked", ["@revoked * \(skLine)", "\(name) \(skLine)"], .revoked, .revoked),
        ]
        try "Host sk-host\n  HostName 127.0.0.1\n  Port \(server.port)\n".write(toFile: path("inventory"), atomically: true, encoding: .utf8)
        for (label, lines, status, finding) in cases {
            try (lines.joined(separator: "\n") + "\n").write(toFile: path("known_hosts"), atomically: true, encoding: .utf8)
            let run = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--inventory", path("inventory"), "--inventory-format", "ssh-config",
                                                                    "--known-hosts", path("known_hosts"), "--timeout", "5", "--format", "json"], limit: 60)
            let document = try RecordedScan.decode(Data(run.stdout))
            XCTAssertEqual(document.hosts.first?.status, status, "\(label): \(document.hosts.first?.reason ?? "") \(run.stderrText)")
            XCTAssertEqual(document.hosts.first?.keys.first?.type, "sk-ssh-ed25519@openssh.com", label)

            try "Host sk-host\n  HostName 127.0.0.1\n  Port \(server.port)\n  UserKnownHostsFile \(path("known_hosts"))\n  GlobalKnownHostsFile /dev/null\n"
                .write(toFile: path("ssh_config"), atomically: true, encoding: .utf8)
            XCTAssertEqual(try SSHOracle.handshake(host: "sk-host", config: path("ssh_config")).finding, finding, label)
        }
    }
}
