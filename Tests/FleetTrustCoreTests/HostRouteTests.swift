import XCTest
@testable import FleetTrustCore

/// Routes read from what the inventory readers record, as `ssh` would take them.
final class HostRouteTests: XCTestCase {
    func testProxyJumpChainKeepsHopsInOrderWithUsersAndPorts() {
        let route = HostRoute(proxy: "ProxyJump admin@gate.example:2222,inner,[2001:db8::1]:22")
        XCTAssertEqual(route.jumpHosts, [JumpHost(user: "admin", host: "gate.example", port: 2222), JumpHost(host: "inner"),
                                         JumpHost(host: "2001:db8::1", port: 22)])
        XCTAssertEqual(route.proxyDirective, "ProxyJump admin@gate.example:2222,inner,[2001:db8::1]:22")
        XCTAssertEqual(JumpHost("ssh://ops@edge:2200"), JumpHost(user: "ops", host: "edge", port: 2200))
    }

    func testNoneAndAbsentAreDirectAndAHopThatWouldBeAnOptionIsRefused() {
        XCTAssertTrue(HostRoute(proxy: nil).isDirect)
        XCTAssertTrue(HostRoute(proxy: "ProxyJump none").isDirect)
        XCTAssertNil(JumpHost("-oProxyCommand=evil"))
        XCTAssertNil(JumpHost("gate:99999"))
    }

    func testAnsibleArgumentsGiveTheFirstProxyOptionAsSshReadsThem() {
        XCTAssertEqual(HostRoute(proxy: "ansible_ssh_common_args=-J ops@gate,inner").jumpHosts.map(\.description), ["ops@gate", "inner"])
        XCTAssertEqual(HostRoute(proxy: "ansible_ssh_common_args=-o ProxyJump=gate -o ForwardAgent=no").jumpHosts.map(\.host), ["gate"])
        XCTAssertEqual(HostRoute(proxy: "ansible_ssh_extra_args=-oProxyJump=edge").jumpHosts.map(\.host), ["edge"])
        XCTAssertEqual(HostRoute(proxy: "ansible_ssh_common_args=-o ProxyCommand=\"ssh -W %h:%p gate\"").hops,
                       [.command("ssh -W %h:%p gate")])
        XCTAssertEqual(HostRoute(proxy: "ProxyCommand nc -X 5 -x socks:1080 %h %p").hops, [.command("nc -X 5 -x socks:1080 %h %p")])
    }

    func testProxyCommandTokensExpandAsSshExpandsThem() throws {
        XCTAssertEqual(try ProxyCommandTokens.expand("ssh -l %r -W [%h]:%p gate # %n 100%%", host: "10.0.0.5", port: 2222,
                                                     user: "deploy", name: "web"),
                       "ssh -l deploy -W [10.0.0.5]:2222 gate # web 100%")
        XCTAssertThrowsError(try ProxyCommandTokens.expand("ssh %Q", host: "h", port: 22, user: "u", name: "n"))
    }

    func testTheJudgedHostCarriesTheRouteAndReplayRestoresIt() throws {
        let host = InventoryHost(name: "web", address: "10.0.0.5", proxy: "ProxyJump gate,inner")
        let judged = FleetJudge(knownHosts: KnownHosts(files: [TestKeys.file("")]), pins: nil)
            .judge(host, ProbeResult(host: "10.0.0.5", port: 22, failures: [
                ProbeFailure(stage: .proxy, code: .bastionKeyNotTrusted, message: "bastion gate: ssh does not trust its host key")]))
        XCTAssertEqual(judged.route.jumpHosts.map(\.host), ["gate", "inner"])
        XCTAssertEqual(judged.status, .error)
        let data = try ScanReport(knownHostsFiles: [], pinFiles: [], judged: [judged]).encoded()
        let entry = try ScanReport.decode(data).hosts[0]
        XCTAssertEqual(entry.route.map(\.hop), ["gate", "inner"])
        XCTAssertEqual(entry.error?.stage, "proxy")
        let replayed = try ScanReplay.load(data, source: "scan.json")[0]
        XCTAssertEqual(replayed.host.route, judged.route)
    }
}
