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
                                   routing: HostRoute.parse("ansible_ssh_common_args=-J gate:0"))
        XCTAssertThrowsError(try ConnectCommand().arguments(for: judged(routed))) {
            XCTAssertTrue("\($0)".hasPrefix("refusing to connect: hosts:2: its ProxyJump \"gate:0\" is invalid"), "\($0)")
        }
        let clean = try ConnectCommand(user: "ops").arguments(for: judged(InventoryHost(name: "web", address: "10.0.0.5")))
        XCTAssertEqual(clean.last, "ops@10.0.0.5")
    }
}

/// A recorded scan (`--replay`) is someone else's document: the route it records is shown, but a
/// ProxyCommand in it is never handed to `ssh`, which would run it through a shell.
final class RecordedRouteConnectTests: XCTestCase {
    func testConnectNeverRunsAProxyCommandARecordedScanNames() throws {
        let key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJRy8mWq0rUfVnMyqe6ahd4iSom2F/mPQyKD50/tTTMr"
        let document = """
            {"version": 3, "summary": {"total": 1, "by_status": {"new": 1}, "exit_status": 1}, "hosts": [
            {"name": "web", "host": "10.0.0.5", "port": 22, "status": "new", "scanned_from": "eu",
             "route": [{"kind": "proxy-command", "hop": "touch /tmp/recorded-proxy-command-ran"}],
             "keys": [{"type": "ssh-ed25519", "key": "\(key)", "verdict": "new"}]}]}
            """
        let (host, result) = try XCTUnwrap(try ScanReplay.load(Data(document.utf8), source: "estate.json").first)
        XCTAssertEqual(result.keys.count, 1, "the recorded key is still judged")
        let judged = FleetJudge(knownHosts: KnownHosts(files: [KnownHostsFile(path: "/k", bytes: [])]), pins: nil).judge(host, result)
        XCTAssertEqual(judged.status, .new)
        XCTAssertThrowsError(try ConnectCommand().arguments(for: judged)) {
            XCTAssertTrue("\($0)".hasPrefix("refusing to connect: its ProxyCommand"), "\($0)")
        }
    }
}
