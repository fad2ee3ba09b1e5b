import FleetTrustCore
@testable import FleetTrustDashboard
import XCTest

/// Connect hands `ssh` only names `ssh` itself would accept on its command line, and never a host
/// the inventory refused: the argument vector is built from checked names or not at all.
final class ConnectCommandRefusalTests: XCTestCase {
    private func judged(_ host: InventoryHost) -> JudgedHost {
        FleetJudge(knownHosts: KnownHosts(files: [KnownHostsFile(path: "/k", bytes: [])]), pins: nil)
            .judge(host, ProbeResult(host: host.name, port: host.port, failures: host.refusal.map { [$0.failure] } ?? []))
    }

    func testAHostWithAnUnsafeNameAddressOrUserIsNeverHandedToSSH() {
        let source = SourceLocation(file: "hosts.ini", line: 4)
        for host in [InventoryHost(name: "web;id", address: "10.0.0.5", source: source),
                     InventoryHost(name: "web", address: "$(id)", source: source),
                     InventoryHost(name: "web", address: "10.0.0.5", user: "-oProxyCommand=id", source: source),
                     InventoryHost(name: "web", address: "10.0.0.5", user: "a|id", source: source),
                     InventoryHost(name: "-oProxyCommand=id", address: "10.0.0.5", source: source)] {
            XCTAssertThrowsError(try ConnectCommand().arguments(for: judged(host)), host.name) { error in
                XCTAssertTrue("\(error)".hasPrefix("refusing to connect: hosts.ini:4: its "), "\(error)")
                XCTAssertTrue("\(error)".contains("which ssh refuses"), "\(error)")
            }
        }
    }

    func testAnUnsafeConnectUserOrARouteThatDoesNotParseIsRefusedToo() throws {
        XCTAssertThrowsError(try ConnectCommand(user: "x`id`").arguments(for: judged(InventoryHost(name: "web", address: "10.0.0.5")))) {
            XCTAssertTrue("\($0)".contains("user \"x`id`\" contains '`'"), "\($0)")
        }
        let routed = InventoryHost(name: "web", address: "10.0.0.5", source: SourceLocation(file: "hosts", line: 2),
                                   proxy: "ansible_ssh_common_args=-J gate:0")
        XCTAssertThrowsError(try ConnectCommand().arguments(for: judged(routed))) {
            XCTAssertTrue("\($0)".hasPrefix("refusing to connect: hosts:2: its ProxyJump \"gate:0\" is invalid"), "\($0)")
        }
        let clean = try ConnectCommand(user: "ops").arguments(for: judged(InventoryHost(name: "web", address: "10.0.0.5")))
        XCTAssertEqual(clean.last, "ops@10.0.0.5")
    }
}
