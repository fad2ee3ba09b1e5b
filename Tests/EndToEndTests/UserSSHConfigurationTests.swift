import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// Hosts of an Ansible inventory are judged under the user's ssh configuration (`--ssh-config`),
/// as the `ssh` Ansible runs (`ssh -o Port=P ansible_host`) judges them: the real
/// `ssh -o StrictHostKeyChecking=yes` with the same configuration is the oracle, against a real
/// sshd on loopback.
final class UserSSHConfigurationTests: XCTestCase {
    func testAnsibleHostsAreJudgedUnderTheUserSSHConfigurationAsSSHJudgesThem() throws {
        let sshd = try LoopbackSSHD()
        defer { sshd.stop() }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("ft-user-config-\(getpid())-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        func path(_ name: String) -> String { scratch + "/" + name }
        let ed = try XCTUnwrap(sshd.key(ofType: "ssh-ed25519"))
        let knownHosts = path("known_hosts")
        try "[127.0.0.1]:\(sshd.port) \(ed.openSSHLine)\nweb-alias \(ed.openSSHLine)\n"
            .write(toFile: knownHosts, atomically: true, encoding: .utf8)
        let config = path("ssh_config")
        try """
        Host order.test
          HostName 127.0.0.1
          HostKeyAlgorithms rsa-sha2-512,rsa-sha2-256,ssh-ed25519
        Host alias.test
          HostName 127.0.0.1
          HostKeyAlias web-alias
        Host command.test
          HostName 127.0.0.1
          KnownHostsCommand /bin/true
        Host *
          UserKnownHostsFile \(knownHosts)
          GlobalKnownHostsFile /dev/null

        """.write(toFile: config, atomically: true, encoding: .utf8)
        let inventory = path("hosts.ini")
        try ["order", "alias", "command"].map { "\($0) ansible_host=\($0).test ansible_port=\(sshd.port)\n" }.joined()
            .write(toFile: inventory, atomically: true, encoding: .utf8)

        let run = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "json", "--inventory", inventory,
                                                                "--ssh-config", config, "--known-hosts", knownHosts, "--timeout", "10"])
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.stdout)) as? [String: Any], run.stderrText)
        var rows: [String: [String: Any]] = [:]
        for row in document["hosts"] as? [[String: Any]] ?? [] { rows[row["name"] as? String ?? ""] = row }

        func level(_ status: String?) -> Int? {
            switch status {
            case "trusted": return 0
            case "new", "error", "unchecked": return 1
            case "changed", "revoked": return 2
            default: return nil
            }
        }
        for name in ["order", "alias", "command"] {
            let ssh = try SSHOracle.handshake(host: "\(name).test", config: config, extraOptions: ["Port=\(sshd.port)"])
            let status = rows[name]?["status"] as? String
            XCTAssertEqual(level(status), ssh.finding.alarmLevel,
                           "\(name): ssh \(ssh.finding.rawValue) (\(ssh.finalMessage)), fleettrust \(status ?? "-")")
        }
        XCTAssertEqual(rows["order"]?["status"] as? String, "changed",
                       "ssh offers RSA first as written and meets a key of a type known_hosts does not record for the host")
        XCTAssertEqual(rows["alias"]?["status"] as? String, "trusted", "the configuration's HostKeyAlias names the entry")
        XCTAssertEqual(rows["command"]?["status"] as? String, "trusted",
                       "the user's KnownHostsCommand is run; it prints nothing, so the files decide, as for ssh")
    }
}
