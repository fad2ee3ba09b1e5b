import FleetTrustCore
@testable import FleetTrustDashboard
import XCTest

/// Marks are a batch the user builds on the list; they never decide what happens to the host
/// whose page is open, and they are always visible.
final class MarkedHostsTests: XCTestCase {
    /// host0 and host2 new and marked; host1 revoked, on screen in the detail view. (Space marks
    /// and moves down.)
    private func revokedHostOnScreenWithOthersMarked() -> DashboardState {
        var state = Fixtures.state(hosts: 3)
        state = Fixtures.probed(state, 0, .new)
        state = Fixtures.probed(state, 1, .revoked)
        state = Fixtures.probed(state, 2, .new)
        return Fixtures.press(state, .character(" "), .down, .character(" "), .up, .enter).0
    }

    func testTInTheDetailViewIsAboutTheHostOnScreenNotTheMarkedOnes() {
        let detail = revokedHostOnScreenWithOthersMarked()
        XCTAssertEqual(detail.mode, .detail)
        XCTAssertEqual(detail.selectedIndex, 1)
        XCTAssertEqual(detail.markedIndices, [0, 2])
        let asked = Fixtures.press(detail, .character("t")).0
        XCTAssertTrue(asked.notice?.text.value.contains("host1 cannot be trusted here") == true, "\(String(describing: asked.notice))")
        XCTAssertEqual(Fixtures.press(detail, .character("t"), .character("y")).1, [], "a t, y on the revoked host's page saved something")
    }

    func testPInTheDetailViewPinsTheHostOnScreenOnly() {
        var state = Fixtures.state(hosts: 3)
        state.settings.pinFile = "/tmp/pins"
        state = Fixtures.probed(state, 0, .new)
        state = Fixtures.probed(state, 1, .new)
        state = Fixtures.press(state, .character(" "), .enter, .character("p")).0
        guard case .confirm(.pin(let items, let marked)) = state.mode else { return XCTFail("\(state.mode)") }
        XCTAssertEqual(items.map(\.index), [1])
        XCTAssertEqual(marked, 0)
        let text = DashboardView.view(state).text
        XCTAssertTrue(text.contains("Pin the presented keys of 1 host in /tmp/pins?") && text.contains(" host1 "), text)
        XCTAssertFalse(text.contains("batch"), text)
    }

    func testABatchDialogSaysItIsABatchOfMarkedHosts() {
        var state = Fixtures.state(hosts: 3)
        state = Fixtures.probed(state, 0, .new)
        state = Fixtures.probed(state, 2, .new)
        state = Fixtures.press(state, .character(" "), .down, .character(" "), .character("t")).0
        let text = DashboardView.view(state).text
        XCTAssertTrue(text.contains("Trust a batch of your 2 marked hosts?"), text)
    }

    func testABatchThatLeavesOutTheHighlightedHostSaysSoInItsFirstLineAtEightyColumns() {
        var state = Fixtures.state(hosts: 3)
        state.size = TerminalSize(width: 80, height: 24)
        for index in 0..<3 { state = Fixtures.probed(state, index, .new) }
        state = Fixtures.press(state, .character(" ")).0
        state = Fixtures.type(Fixtures.press(state, .character("/")).0, "host2")
        state = Fixtures.press(state, .enter, .character("t")).0
        guard case .confirm(.trust(let items, _, _)) = state.mode else { return XCTFail("\(state.mode)") }
        XCTAssertEqual(items.map(\.index), [0])
        let screen = DashboardView.view(state)
        XCTAssertTrue(screen.lines[1].text.hasPrefix(" * 1 marked (1 hidden by the filter)"), screen.lines[1].text)
        XCTAssertTrue(screen.lines[2].text.contains("NOT the highlighted host host2"), screen.text)
    }

    func testTheHeaderCountsMarksAndSaysWhenAFilterHidesSome() {
        var state = Fixtures.state(hosts: 3)
        state = Fixtures.press(state, .character(" "), .character(" ")).0
        XCTAssertTrue(DashboardView.view(state).lines[1].text.contains("* 2 marked "), DashboardView.view(state).text)
        state = Fixtures.type(Fixtures.press(state, .character("/")).0, "host1")
        state = Fixtures.press(state, .enter).0
        let header = DashboardView.view(state).lines[1].text
        XCTAssertTrue(header.contains("* 2 marked (1 hidden by the filter)"), header)
    }
}
