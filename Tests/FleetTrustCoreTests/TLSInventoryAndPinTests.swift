import XCTest
@testable import FleetTrustCore

/// TLS endpoints as inventories and pin files write them, and the certificate reader on bytes
/// that are not certificates.
final class TLSInventoryAndPinTests: XCTestCase {
    func testPlainLinesNameTLSEndpointsWithTheirServerName() {
        let inventory = InventoryFixtures.read(text: "https://web.example.com\nhttps://web.example.com:8443\ntls://192.0.2.9:636\nssh.example.com\n",
                                               format: .plain)
        XCTAssertEqual(inventory.diagnostics, [])
        XCTAssertEqual(inventory.hosts.map(\.name), ["web.example.com:443/tls", "web.example.com:8443/tls", "192.0.2.9:636/tls", "ssh.example.com"])
        XCTAssertEqual(inventory.hosts.map(\.port), [443, 8443, 636, 22])
        XCTAssertEqual(inventory.hosts.map(\.endpoint), [.tls(TLSEndpoint(serverName: "web.example.com")), .tls(TLSEndpoint(serverName: "web.example.com")),
                                                         .tls(TLSEndpoint(serverName: nil)), .ssh])
    }

    func testTLSLineWithoutPortOrWithAPathIsAnErrorWithItsLine() {
        let inventory = InventoryFixtures.read(text: "tls://ldap.example.com\nhttps://a.example.com/login\n", format: .plain)
        XCTAssertEqual(inventory.hosts, [])
        XCTAssertEqual(inventory.diagnostics.count, 2)
        XCTAssertTrue(inventory.diagnostics[0].description.contains(":1:"), inventory.diagnostics[0].description)
    }

    func testTLSPortsVariableAddsEndpointsAtTheHostsAddressNamedByTheHost() {
        let inventory = InventoryFixtures.read(text: """
            [bmc]
            bmc1.example.com ansible_host=192.0.2.20
            [bmc:vars]
            fleettrust_tls_ports=443, 8443
            fleettrust_policy=pin-only

            """, format: .ansibleINI)
        XCTAssertEqual(inventory.errors, [])
        XCTAssertEqual(inventory.hosts.map(\.name), ["bmc1.example.com", "bmc1.example.com:443/tls", "bmc1.example.com:8443/tls"])
        let endpoint = inventory.hosts[1]
        XCTAssertEqual(endpoint.address, "192.0.2.20")
        XCTAssertEqual(endpoint.endpoint, .tls(TLSEndpoint(serverName: "bmc1.example.com")))
        XCTAssertEqual(endpoint.policy, "pin-only")
        XCTAssertEqual(endpoint.groups, ["bmc"])
    }

    /// A TLS endpoint of a host behind a proxy, or whose proxy does not parse, was probed directly
    /// at the host's address: possibly another machine than the one the route reaches.
    func testTLSEndpointsKeepTheirHostsRouteAndAreNeverProbedDirectly() {
        let inventory = InventoryFixtures.read(text: """
            [web]
            w1 ansible_host=192.0.2.21 fleettrust_tls_ports=443 ansible_ssh_common_args="-J gate:0"
            w2 ansible_host=192.0.2.22 fleettrust_tls_ports=443 ansible_ssh_common_args="-J gate"

            """, format: .ansibleINI)
        let endpoints = Dictionary(uniqueKeysWithValues: inventory.hosts.filter { $0.endpointProtocol == .tls }.map { ($0.name, $0) })
        XCTAssertEqual(endpoints["w1:443/tls"]?.refusal?.code, .invalidRoute)
        XCTAssertEqual(endpoints["w2:443/tls"]?.route.jumpHosts.map(\.host), ["gate"])
        XCTAssertEqual(try endpoints["w2:443/tls"]?.routing.get(), try HostRoute(proxy: "ProxyJump gate"),
                       "TLSProbe reports a proxied endpoint instead of connecting")
    }

    func testSPKIPinsParseAndApplyOnlyToTLSEndpoints() throws {
        let digest = Base64.encode(Digest.sha256(Array("key".utf8)))
        let pins = try PinSet.parse(path: "pins", bytes: Array("[bmc1.example.com]:443 pin-sha256:\(digest) expires=2099-01-01\n".utf8))
        XCTAssertEqual(pins.lines.first.map { Set($0.spkiPins.map(\.description)) }, [digest])
        var endpoint = InventoryHost(name: "bmc1.example.com:443/tls", address: "192.0.2.20", port: 443)
        endpoint.endpoint = .tls(TLSEndpoint(serverName: "bmc1.example.com"))
        let names = PinSet.names(for: endpoint, lookup: LookupName(host: endpoint.address, port: 443))
        XCTAssertEqual(pins.lines(for: names).count, 1)
        let ssh = InventoryHost(name: "bmc1.example.com", port: 443)
        let sshPin = PinJudgement.judge(keys: [], names: PinSet.names(for: ssh, lookup: LookupName(host: ssh.address, port: 443)),
                                        pins: pins, mode: .enforce)
        XCTAssertEqual(sshPin.verdict, .unpinned, "an SPKI pin never makes an SSH host a pin mismatch")
        XCTAssertThrowsError(try PinSet.parse(path: "pins", bytes: Array("h pin-sha256:AAAA\n".utf8)))
    }

    func testCertificateReaderRefusesBytesThatAreNotOneCertificate() {
        XCTAssertThrowsError(try TLSCertificate(der: []))
        XCTAssertThrowsError(try TLSCertificate(der: Array(repeating: 0x30, count: 200)))
        XCTAssertThrowsError(try TLSCertificate(der: [0x30, 0x82, 0xff, 0xff] + Array(repeating: 0, count: 64)))
        XCTAssertThrowsError(try TLSCertificate(der: Array(repeating: 1, count: TLSHandshake.maximumCertificateBytes + 1)))
    }
}
