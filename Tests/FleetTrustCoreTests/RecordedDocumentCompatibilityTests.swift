import XCTest
@testable import FleetTrustCore

/// A scan document recorded before rows carried a typed endpoint and a parsed route
/// (Fixtures/Replay/scan-before-endpoint-type.json, written by `fleettrust scan --format json` of
/// that time over an ssh_config with a ProxyJump, an invalid ProxyJump and a ProxyCommand, and a
/// plain list with a TLS and an SMTP STARTTLS line) still replays: every row comes back as the
/// same endpoint with the same route, and is judged again to the status it was recorded with.
final class RecordedDocumentCompatibilityTests: XCTestCase {
    private let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/Replay/scan-before-endpoint-type.json").path

    func testAnOlderDocumentReplaysToTheSameEndpointsRoutesAndStatuses() throws {
        let replayed = try ScanReplay.load(path: fixture, source: "scan.json")
        XCTAssertEqual(replayed.map(\.host.name), ["routed", "badroute", "piped", "direct", "127.0.0.1:1/tls", "localhost:1/smtp"])
        XCTAssertEqual(replayed.map(\.host.endpoint), [.ssh, .ssh, .ssh, .ssh, .tls(TLSEndpoint(serverName: nil)),
                                                       .tls(TLSEndpoint(serverName: "localhost", startTLS: .smtp))])
        XCTAssertEqual(replayed.map(\.host.routing), [.success(try HostRoute(proxy: "ProxyJump gate.invalid")), .success(.direct),
                                                      .success(try HostRoute(proxy: "ProxyCommand /bin/false %h %p")),
                                                      .success(.direct), .success(.direct), .success(.direct)])
        let judge = FleetJudge(knownHosts: KnownHosts(files: []), pins: nil)
        let judged = replayed.map { judge.judge($0.host, $0.result) }
        XCTAssertEqual(judged.map(\.status), [.unreachable, .error, .error, .unreachable, .unreachable, .unreachable])
        XCTAssertEqual(judged.map { $0.failure?.code }, [.hopUnreachable, .invalidRoute, .proxyCommandNotAllowed,
                                                         .connectionRefused, .connectionRefused, .connectionRefused])
    }

    /// A recorded hop that does not parse refuses the row again; it is never dropped from the route.
    func testARecordedHopThatDoesNotParseRefusesTheRow() {
        XCTAssertEqual(ScanReport.Hop.routing([ScanReport.Hop(kind: "proxy-jump", hop: "gate:0")]).map(\.hops),
                       .failure(RouteError(setting: "ProxyJump", value: "gate:0", reason: "port \"0\" is not a number from 1 to 65535")))
        XCTAssertEqual(ScanReport.Hop.routing([ScanReport.Hop(kind: "proxy-command", hop: "")]).map(\.hops),
                       .failure(RouteError(setting: "ProxyCommand", value: "", reason: "it has no value")))
    }
}
