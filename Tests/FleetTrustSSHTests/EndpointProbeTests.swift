import FleetTrustCore
import Foundation
import Glibc
import Synchronization
import XCTest
@testable import FleetTrustSSH

/// The seam every protocol's probe goes through (`EndpointProbe`): what it does before a
/// protocol's first byte is the same for SSH and TLS, and each TLS connection takes its permit
/// from the scan's `TargetPoliteness` as an SSH exchange does.
final class EndpointProbeTests: XCTestCase {
    /// Eight TLS endpoints on one server, probed at once under a limit of two connections to a
    /// server: the server never sees more than the limit (up to twice that while the closed
    /// connections' ends are still on their way to its threads, on a loaded machine), where
    /// without the permits it saw all eight at once.
    func testTLSConnectionsToOneServerWaitForThePermitsSSHConnectionsTake() throws {
        let open = Mutex((now: 0, most: 0))
        let server = try ScriptedServer { client in
            open.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
            ScriptedServer.drain(client)
            open.withLock { $0.now -= 1 }
        }
        defer { server.close() }
        let politeness = TargetPoliteness(ceiling: 2)
        let probes = (0..<8).map { index in
            var host = InventoryHost(name: "e\(index):\(server.port)/tls", address: "127.0.0.1", port: server.port)
            let endpoint = TLSEndpoint(serverName: "e\(index).example")
            host.endpoint = .tls(endpoint)
            return TLSProbe(host: host, endpoint: endpoint, timeout: .milliseconds(400), politeness: politeness)
        }
        let codes = Mutex<[FailureCode?]>(Array(repeating: nil, count: probes.count))
        // A thread each, as the pool runs them (`concurrentPerform` would run only one per core).
        let finished = DispatchGroup()
        for index in probes.indices {
            finished.enter()
            Thread.detachNewThread {
                let result = probes[index].run(cancellation: ProbeCancellation())
                codes.withLock { $0[index] = result.failures.first?.code }
                finished.leave()
            }
        }
        XCTAssertEqual(finished.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(codes.withLock { $0 }, Array(repeating: .tlsTimeout, count: probes.count),
                       "each server holds its connection without answering the ClientHello")
        let most = open.withLock { $0.most }
        XCTAssertGreaterThanOrEqual(most, 2, "the limit's connections run side by side")
        XCTAssertLessThanOrEqual(most, 4, "the server saw \(most) connections at once")
    }

    /// A TLS endpoint of a host `ssh` reaches through a bastion is refused by the shared
    /// preamble before anything connects; one whose route does not parse, for its route error.
    func testARoutedOrUnparsableRouteStopsATLSProbeBeforeItConnects() {
        var routed = InventoryHost(name: "w:443/tls", address: "127.0.0.1", port: 9, routing: HostRoute.parse("ProxyJump gate"))
        routed.endpoint = .tls(TLSEndpoint(serverName: "w.example"))
        XCTAssertEqual(TLSProbe(host: routed, timeout: .seconds(1))?.run(cancellation: ProbeCancellation()).failures.map(\.code),
                       [.proxied])
        routed.routing = HostRoute.parse("ProxyJump gate:0")
        XCTAssertEqual(TLSProbe(host: routed, timeout: .seconds(1))?.run(cancellation: ProbeCancellation()).failures.map(\.code),
                       [.invalidRoute])
        XCTAssertNil(TLSProbe(host: InventoryHost(name: "ssh-host"), timeout: .seconds(1)), "an SSH row has no TLS probe")
    }
}
