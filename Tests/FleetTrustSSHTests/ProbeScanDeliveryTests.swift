import XCTest
import FleetTrustCore
import FleetTrustTestFleet
@testable import FleetTrustSSH

/// Every host asked for is reported exactly once, even when thousands finish at the same moment.
final class ProbeScanDeliveryTests: XCTestCase {
    func testEveryHostIsReportedOnceWhenResultsArriveTogether() async throws {
        var ports: [Int] = []
        while ports.count < 2000 {
            let port = try Loopback.freePort()
            if !ports.contains(port) { ports.append(port) }
        }
        let hosts = ports.map { InventoryHost(name: "closed-\($0)", address: "127.0.0.1", port: $0) }
        let pool = ProbePool(settings: .init(concurrency: 64, timeout: .seconds(2)))
        for round in 0..<4 {
            var seen = [Int](repeating: 0, count: hosts.count)
            for await event in pool.probe(hosts) { seen[event.index] += 1 }
            let missing = seen.indices.filter { seen[$0] == 0 }
            XCTAssertEqual(missing, [], "round \(round): hosts never reported")
            XCTAssertTrue(seen.allSatisfy { $0 <= 1 }, "round \(round): a host reported twice")
        }
    }
}
