import FleetTrustCore
import FleetTrustTestFleet
import Foundation
import XCTest

/// A ProxyCommand written in an inventory is data until the user says otherwise: without
/// `--allow-inventory-proxy-command` the host is refused and nothing runs; the user's own ssh
/// configuration's ProxyCommand runs as ssh runs it.
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
}
