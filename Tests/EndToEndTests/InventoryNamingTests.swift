import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// Proves, with the real `ssh` against the real test fleet, that the known_hosts name fleettrust
/// derives for an inventory host is the one `ssh` itself looks up, and that the alias is not.
final class InventoryNamingTests: XCTestCase {
    private var fleet: TestFleet!
    private var directory: String!

    override func setUpWithError() throws {
        var options = TestFleet.Options(hosts: 1)
        options.certificateHost = false
        fleet = try TestFleet(options)
        directory = fleet.directory + "/naming-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        fleet?.stop()
    }

    private var host: TestFleet.Host { fleet.hosts[0] }

    /// An ssh_config inventory for the fleet host, read through the inventory reader.
    private func sshConfigInventory() throws -> (path: String, inventory: Inventory) {
        let config = """
        Host fleet-alias
            HostName \(host.address)
            Port \(host.port)
        Host keyed-alias
            HostName \(host.address)
            Port \(host.port)
            HostKeyAlias Keyed.Example.TEST
        """
        let path = directory + "/ssh_config"
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        let inventory = Inventory.read(InventorySource(name: path, bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path)))))
        XCTAssertEqual(inventory.diagnostics, [])
        return (path, inventory)
    }

    func testSSHAcceptsTheHostKeyUnderTheDerivedNameForAnAliasWithHostNameAndPort() throws {
        let (config, inventory) = try sshConfigInventory()
        let entry = try XCTUnwrap(inventory.hosts.first { $0.name == "fleet-alias" })
        XCTAssertEqual(entry.knownHostsName, "[127.0.0.1]:\(host.port)")
        XCTAssertEqual(entry.additionalNames, ["fleet-alias"])
        XCTAssertEqual(try ssh(config: config, alias: "fleet-alias", knownHostsName: entry.knownHostsName), .trusted)
        for aliasName in ["fleet-alias", "[fleet-alias]:\(host.port)"] {
            XCTAssertEqual(try ssh(config: config, alias: "fleet-alias", knownHostsName: aliasName), .unknown,
                           "an entry under the alias \(aliasName) must not satisfy ssh")
        }
    }

    func testSSHAcceptsTheHostKeyUnderTheHostKeyAliasWithoutPort() throws {
        let (config, inventory) = try sshConfigInventory()
        let entry = try XCTUnwrap(inventory.hosts.first { $0.name == "keyed-alias" })
        XCTAssertEqual(entry.knownHostsName, "keyed.example.test")
        XCTAssertEqual(entry.additionalNames, ["keyed-alias", "127.0.0.1"])
        XCTAssertEqual(try ssh(config: config, alias: "keyed-alias", knownHostsName: entry.knownHostsName), .trusted)
        for otherName in ["[keyed.example.test]:\(host.port)", "[127.0.0.1]:\(host.port)", "keyed-alias"] {
            XCTAssertEqual(try ssh(config: config, alias: "keyed-alias", knownHostsName: otherName), .unknown,
                           "an entry under \(otherName) must not satisfy ssh")
        }
    }

    func testFleetPlainInventoryNamesMatchTheFleetsKnownHostsNames() throws {
        let inventory = Inventory.read(InventorySource(name: fleet.inventoryPath,
                                                       bytes: Array(try Data(contentsOf: URL(fileURLWithPath: fleet.inventoryPath)))))
        XCTAssertEqual(inventory.diagnostics, [])
        XCTAssertEqual(inventory.hosts.map(\.knownHostsName), fleet.endpoints.map(\.knownHostsName))
        XCTAssertEqual(inventory.hosts.map(\.port), fleet.endpoints.map(\.port))
    }

    /// Runs `ssh -F config alias true` with a known_hosts file holding the host's keys under
    /// `knownHostsName`; the fleet accepts no credentials, so "trusted" means host-key checking
    /// passed without a prompt.
    private func ssh(config: String, alias: String, knownHostsName: String) throws -> SSHOracle.Verdict {
        let knownHosts = directory + "/known_hosts"
        let lines = host.publicKeys.map { "\(knownHostsName) \($0.openSSHLine)\n" }.joined()
        try lines.write(toFile: knownHosts, atomically: true, encoding: .utf8)
        let run = try ProgramRun.run("/usr/bin/ssh", [
            "-F", config, "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
            "-o", "UserKnownHostsFile=\(knownHosts)", "-o", "GlobalKnownHostsFile=/dev/null", "-o", "UpdateHostKeys=no",
            "-o", "PubkeyAuthentication=no", "-o", "PasswordAuthentication=no", "-o", "KbdInteractiveAuthentication=no",
            "-o", "ConnectTimeout=20", alias, "true",
        ], limit: 60)
        return SSHOracle.classify(run.stderrText)
    }
}
