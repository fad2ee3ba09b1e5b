import FleetTrustCore
@testable import FleetTrustDashboard
import XCTest

/// The header says how many hosts the probe pool has in flight and queued while a discovery runs,
/// and says nothing of it once the pool is idle or when it cannot tell (a recording).
final class ProbeLoadHeaderTests: XCTestCase {
    func testTheHeaderShowsHostsInFlightAndQueuedWhileDiscovering() {
        var state = Fixtures.state(hosts: 3)
        state.discovery = DiscoveryProgress(total: 3, done: 1)
        XCTAssertFalse(DashboardView.view(state).lines[1].text.contains("in flight"), "the pool has not said yet")
        _ = DashboardUpdate.apply(.probeLoad(ProbeLoad(inFlight: 2, done: 1, waiting: 0)), to: &state)
        XCTAssertEqual(state.discovery.load, ProbeLoad(inFlight: 2, done: 1, waiting: 0))
        let header = DashboardView.view(state).lines[1].text
        XCTAssertTrue(header.contains("discovery 1/3 · 2 in flight, 0 queued"), header)
        _ = DashboardUpdate.apply(.probeLoad(nil), to: &state)
        XCTAssertFalse(DashboardView.view(state).lines[1].text.contains("in flight"))
    }
}
