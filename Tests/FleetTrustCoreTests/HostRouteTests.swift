import XCTest
@testable import FleetTrustCore

/// Routes read from what the inventory readers record, as `ssh` would take them.
final class HostRouteTests: XCTestCase {
    func testProxyJumpChainKeepsHopsInOrderWithUsersAndPorts() throws {
        let route = try HostRoute(proxy: "ProxyJump admin@gate.example:2222,inner,[2001:db8::1]:22")
        XCTAssertEqual(route.jumpHosts, [try JumpHost(user: "admin", host: "gate.example", port: 2222), try JumpHost(host: "inner"),
                                         try JumpHost(host: "2001:db8::1", port: 22)])
        XCTAssertEqual(route.proxyDirective, "ProxyJump admin@gate.example:2222,inner,[2001:db8::1]:22")
        XCTAssertEqual(try JumpHost("ssh://ops@edge:2200"), try JumpHost(user: "ops", host: "edge", port: 2200))
    }

    func testNoneAndAbsentAreDirectAndAHopThatWouldBeAnOptionIsRefused() throws {
        XCTAssertTrue(try HostRoute(proxy: nil).isDirect)
        XCTAssertTrue(try HostRoute(proxy: "ProxyJump none").isDirect)
        XCTAssertThrowsError(try JumpHost("-oProxyCommand=evil"))
        XCTAssertThrowsError(try JumpHost("gate:99999"))
    }

    func testAnsibleArgumentsGiveTheFirstProxyOptionAsSshReadsThem() throws {
        XCTAssertEqual(try HostRoute(proxy: "ansible_ssh_common_args=-J ops@gate,inner").jumpHosts.map(\.description), ["ops@gate", "inner"])
        XCTAssertEqual(try HostRoute(proxy: "ansible_ssh_common_args=-o ProxyJump=gate -o ForwardAgent=no").jumpHosts.map(\.host), ["gate"])
        XCTAssertEqual(try HostRoute(proxy: "ansible_ssh_extra_args=-oProxyJump=edge").jumpHosts.map(\.host), ["edge"])
        XCTAssertEqual(try HostRoute(proxy: "ansible_ssh_common_args=-o ProxyCommand=\"ssh -W %h:%p gate\"").hops,
                       [.command("ssh -W %h:%p gate")])
        XCTAssertEqual(try HostRoute(proxy: "ProxyCommand nc -X 5 -x socks:1080 %h %p").hops, [.command("nc -X 5 -x socks:1080 %h %p")])
    }

    func testProxyCommandTokensExpandAsSshExpandsThem() throws {
        let web = try SSHDestination(name: "web", address: "10.0.0.5", user: nil)
        XCTAssertEqual(try ProxyCommandTokens.expand("ssh -l %r -W [%h]:%p gate # %n 100%%", destination: web, port: 2222,
                                                     user: SSHUserName("deploy")),
                       "ssh -l deploy -W [10.0.0.5]:2222 gate # web 100%")
        let mixed = try SSHDestination(name: "Web", address: "Web.Example", user: nil)
        XCTAssertEqual(try ProxyCommandTokens.expand("%h %n", destination: mixed, port: 22, user: SSHUserName("u")), "web.example Web",
                       "ssh lower-cases the host name it connects to, not the alias")
        let plain = try SSHDestination(name: "n", address: "h", user: "u")
        XCTAssertThrowsError(try ProxyCommandTokens.expand("ssh %Q", destination: plain, port: 22, user: SSHUserName("u")))
    }

    func testTheJudgedHostCarriesTheRouteAndReplayRestoresIt() throws {
        let host = InventoryHost(name: "web", address: "10.0.0.5", routing: HostRoute.parse("ProxyJump gate,inner"))
        let judged = FleetJudge(knownHosts: KnownHosts(files: [TestKeys.file("")]), pins: nil)
            .judge(host, ProbeResult(host: "10.0.0.5", port: 22, failures: [
                ProbeFailure(stage: .proxy, code: .bastionKeyNotTrusted, message: "bastion gate: ssh does not trust its host key")]))
        XCTAssertEqual(judged.route.jumpHosts.map(\.host), ["gate", "inner"])
        XCTAssertEqual(judged.status, .error)
        let data = try ScanReport(knownHostsFiles: [], pinFiles: [], judged: [judged]).encoded()
        let entry = try RecordedScan.decode(data).hosts[0]
        XCTAssertEqual(entry.route.map(\.hop), ["gate", "inner"])
        XCTAssertEqual(entry.error?.stage, "proxy")
        let replayed = try ScanReplay.load(data, source: "scan.json")[0]
        XCTAssertEqual(replayed.host.route, judged.route)
    }

    func testEveryProxyJumpSshRefusesIsARouteErrorNeverAShorterOrDirectRoute() {
        for bad in ["gate:0", "gate:65536", "gate:99999", "gate:22x", "gate:+22", "gate:-1", "-gate", "-oProxyCommand=evil",
                    "-l@gate", "@gate", "ops@", "[::1", "[::1]x", "[::1]:0", "ok,gate:0", "gate:0,ok", "ok,,ok", "a;b", "u`id`@gate",
                    "ssh://gate:0", "2001:db8::1"] {
            XCTAssertThrowsError(try HostRoute(proxy: "ProxyJump \(bad)"), bad) { error in
                let text = "\(error)"
                XCTAssertTrue(text.hasPrefix("ProxyJump \""), text)
                XCTAssertTrue(text.hasSuffix("; ssh refuses it (Invalid ProxyJump)"), text)
            }
        }
        XCTAssertThrowsError(try HostRoute(proxy: "ansible_ssh_common_args=-J host:0"), "Ansible's -J is ssh's -J")
        XCTAssertThrowsError(try HostRoute(proxy: "ansible_ssh_extra_args=-o ProxyJump=-evil"))
        XCTAssertThrowsError(try HostRoute(proxy: "ansible_ssh_common_args=-o ProxyJump="))
        XCTAssertThrowsError(try HostRoute(proxy: "ProxyJump gate:0")) { error in
            XCTAssertTrue("\(error)".contains("port \"0\" is not a number from 1 to 65535"), "\(error)")
        }
        XCTAssertEqual(try HostRoute(proxy: "ProxyJump [2001:db8::1]").jumpHosts.map(\.host), ["2001:db8::1"])
    }

    func testAHostKeepsItsParsedRouteOrItsRouteErrorAndIsRefusedForTheError() throws {
        var host = InventoryHost(name: "web", address: "10.0.0.5", source: SourceLocation(file: "hosts", line: 3),
                                 routing: HostRoute.parse("ansible_ssh_common_args=-J gate:0"))
        XCTAssertTrue(host.route.isDirect)
        let refusal = try XCTUnwrap(host.refusal, "a route that does not parse refuses the host")
        XCTAssertEqual(refusal.code, .invalidRoute)
        XCTAssertEqual(refusal.failure.stage, .proxy)
        XCTAssertTrue(refusal.description.hasPrefix("hosts:3: its ProxyJump \"gate:0\" is invalid"), refusal.description)
        host.routing = HostRoute.parse("ProxyJump gate:2222")
        XCTAssertNil(host.refusal)
        XCTAssertEqual(host.route.jumpHosts.map(\.description), ["gate:2222"])
        host.routing = HostRoute.parse(nil)
        XCTAssertEqual(host.routing, .success(.direct))
    }
}
