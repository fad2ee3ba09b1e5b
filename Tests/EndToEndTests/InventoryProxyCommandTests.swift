import FleetTrustCore
import FleetTrustTestFleet
import Foundation
import XCTest

/// A ProxyCommand written in an inventory is data until the user says otherwise: without
/// `--allow-inventory-proxy-command` the host is refused and nothing runs; the user's own ssh
/// configuration's ProxyCommand runs as ssh runs it. Whose a line is goes by the file it was read
/// from: an inventory that `Include`s the user's configuration gets no command of its own run.
final class InventoryProxyCommandTests: XCTestCase {
    private var scratch = ""

    override func setUpWithError() throws {
        scratch = NSTemporaryDirectory() + "inventory-proxy-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: scratch) }

    private func scan(_ arguments: [String]) throws -> (ProgramRun, [String: RecordedScan.Host]) {
        let run = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "json", "--no-history", "--timeout", "3",
                                                                 "--known-hosts", scratch + "/kh"] + arguments)
        let document = try RecordedScan.decode(Data(run.stdout))
        return (run, Dictionary(uniqueKeysWithValues: document.hosts.map { ($0.name, $0) }))
    }

    func testAnInventorysProxyCommandRunsOnlyWhenAllowedAndTheUsersOwnAlways() throws {
        let marker = scratch + "/ran"
        try "Host from-config\n  HostName 127.0.0.1\n  Port 1\n  ProxyCommand /usr/bin/touch \(marker)-config\n"
            .write(toFile: scratch + "/inventory.conf", atomically: true, encoding: .utf8)
        try "[web]\nfrom-ansible ansible_host=127.0.0.1 ansible_port=1 ansible_ssh_common_args='-o ProxyCommand=\"/usr/bin/touch \(marker)-ansible\"'\n"
            .write(toFile: scratch + "/inventory.ini", atomically: true, encoding: .utf8)
        let inventories = ["--inventory", scratch + "/inventory.conf", "--inventory-format", "ssh-config"]
        let (refused, hosts) = try scan(inventories + ["--ssh-config", "/dev/null"])
        XCTAssertEqual(hosts["from-config"]?.error?.code, .proxyCommandNotAllowed, refused.stderrText)
        XCTAssertTrue(hosts["from-config"]?.error?.message.contains("--allow-inventory-proxy-command") == true)
        let (ansible, ansibleHosts) = try scan(["--inventory", scratch + "/inventory.ini", "--ssh-config", "/dev/null"])
        XCTAssertEqual(ansibleHosts["from-ansible"]?.error?.code, .proxyCommandNotAllowed, ansible.stderrText)
        for suffix in ["-config", "-ansible"] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: marker + suffix), "an inventory's ProxyCommand ran")
        }

        _ = try scan(inventories + ["--ssh-config", "/dev/null", "--allow-inventory-proxy-command"])
        _ = try scan(["--inventory", scratch + "/inventory.ini", "--ssh-config", "/dev/null", "--allow-inventory-proxy-command"])
        for suffix in ["-config", "-ansible"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: marker + suffix), "allowed, the ProxyCommand runs (\(suffix))")
        }

        // The same file given as the user's own configuration: its ProxyCommand is the user's.
        try FileManager.default.removeItem(atPath: marker + "-config")
        _ = try scan(inventories + ["--ssh-config", scratch + "/inventory.conf"])
        XCTAssertTrue(FileManager.default.fileExists(atPath: marker + "-config"), "the user's own configuration's ProxyCommand runs")
    }

    func testAnInventoryIncludingTheUsersConfigurationRunsNoneOfItsOwnCommands() throws {
        let sshd = try LoopbackSSHD()
        defer { sshd.stop() }
        let marker = scratch + "/ran"
        let userConfig = scratch + "/user_config"
        try "Host web-exec web-known web-proxy\n  HostName 127.0.0.1\n  Port \(sshd.port)\n  User fleettrust-oracle\n"
            .write(toFile: userConfig, atomically: true, encoding: .utf8)
        try """
            Match originalhost web-exec exec "/usr/bin/touch \(marker)-exec"
              GlobalKnownHostsFile /dev/null
            Host web-known
              KnownHostsCommand /usr/bin/touch \(marker)-known
            Host web-proxy
              ProxyCommand /usr/bin/touch \(marker)-proxy
            Host *
            Include \(userConfig)

            """.write(toFile: scratch + "/inventory.conf", atomically: true, encoding: .utf8)
        let (run, hosts) = try scan(["--inventory", scratch + "/inventory.conf", "--inventory-format", "ssh-config",
                                     "--ssh-config", userConfig])
        for suffix in ["-exec", "-known", "-proxy"] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: marker + suffix), "the inventory's command ran (\(suffix))")
        }
        for name in ["web-exec", "web-known"] {
            XCTAssertEqual(hosts[name]?.status, .unchecked, "\(name): \(run.stderrText)")
            XCTAssertTrue(hosts[name]?.reason.contains("never runs a command an inventory names") == true, "\(hosts[name]?.reason ?? "-")")
        }
        XCTAssertTrue(hosts["web-exec"]?.reason.contains("Match exec") == true, "\(hosts["web-exec"]?.reason ?? "-")")
        XCTAssertTrue(hosts["web-known"]?.reason.contains("KnownHostsCommand") == true, "\(hosts["web-known"]?.reason ?? "-")")
        XCTAssertEqual(hosts["web-proxy"]?.error?.code, .proxyCommandNotAllowed, run.stderrText)
    }
}
