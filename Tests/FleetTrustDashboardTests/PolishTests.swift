import FleetTrustCore
@testable import FleetTrustDashboard
import XCTest

/// Small things a newcomer notices: counts in words, key hints that say what the key does, Esc,
/// the selection bar, a labelled recorded key.
final class PolishTests: XCTestCase {
    func testOneHostIsOneHostInTheHeader() {
        XCTAssertTrue(DashboardView.view(Fixtures.state(hosts: 1)).lines[0].text.contains("(1 host) "))
        XCTAssertTrue(DashboardView.view(Fixtures.state(hosts: 2)).lines[0].text.contains("(2 hosts) "))
    }

    func testAtEightyColumnsTheFooterKeepsTheKeysThatActOnTheHost() {
        var state = Fixtures.probed(Fixtures.state(hosts: 2), 0, .trusted)
        state.size = TerminalSize(width: 80, height: 24)
        let footer = DashboardView.view(state).lines.last!.text
        for hint in [" p  pin ", " x  forget ", " c  connect ", " Space  mark ", " ?  help ", " q  quit "] {
            XCTAssertTrue(footer.contains(hint), "\(hint) missing: \(footer)")
        }
        state = Fixtures.probed(state, 1, .new)
        state = Fixtures.press(state, .down).0
        XCTAssertTrue(DashboardView.view(state).lines.last!.text.contains(" t  trust "), DashboardView.view(state).lines.last!.text)
    }

    func testNotAnsweredYetGoesWhenTheHostAnswers() {
        let waiting = Fixtures.press(Fixtures.state(hosts: 2), .character("t")).0
        XCTAssertTrue(waiting.notice?.text.value.contains("host0 has not answered yet") == true, "\(String(describing: waiting.notice))")
        XCTAssertNotNil(Fixtures.probed(waiting, 1, .new).notice, "another host answering changes nothing")
        XCTAssertNil(Fixtures.probed(waiting, 0, .new).notice)
    }

    func testARecordingIsCalledOneAndOffersNoRescan() {
        var state = Fixtures.probed(Fixtures.state(hosts: 1), 0, .trusted)
        XCTAssertTrue(DashboardView.view(state).lines.last!.text.contains(" r  rescan "))
        state.settings.recording = "scan.json"
        let screen = DashboardView.view(state)
        XCTAssertTrue(screen.lines[0].text.contains(" recording inv.txt"), screen.lines[0].text)
        XCTAssertFalse(screen.lines.last!.text.contains("rescan"), screen.lines.last!.text)
    }

    func testTheForgetDialogsKeySaysRemoveNotSave() {
        let state = Fixtures.probed(Fixtures.state(hosts: 1), 0, .trusted)
        let asking = Fixtures.press(state, .character("x")).0
        guard case .confirm(.forget) = asking.mode else { return XCTFail("\(asking.mode)") }
        let footer = DashboardView.view(asking).lines.last!.text
        XCTAssertTrue(footer.contains(" y  remove "), footer)
        XCTAssertFalse(footer.contains("save"), footer)
    }

    func testEscClearsAFilterKeptWithEnter() {
        var state = Fixtures.type(Fixtures.press(Fixtures.state(hosts: 3), .character("/")).0, "host1")
        state = Fixtures.press(state, .enter).0
        XCTAssertEqual(state.visible.count, 1)
        state = Fixtures.press(state, .escape).0
        XCTAssertEqual(state.filterText, "")
        XCTAssertEqual(state.visible.count, 3)
        XCTAssertEqual(state.mode, .list)
    }

    func testTheSelectionBarRunsBehindTheStatusWord() {
        let state = Fixtures.probed(Fixtures.state(hosts: 2), 0, .new)
        let line = HostListView.line(for: state.rows[0], columns: Columns.layout(width: 160), selected: true)
        let gaps = line.spans.filter { $0.role != .selected && $0.text.allSatisfy { $0 == " " } && !$0.text.isEmpty }
        XCTAssertEqual(gaps.map(\.text), [], "blank cells off the selection bar")
        XCTAssertEqual(line.spans.first { $0.text.contains("new") }?.role, .status(.new))
    }

    func testTheChangedKeyDialogLabelsTheRecordedKeyWithItsType() {
        let state = Fixtures.probed(Fixtures.state(hosts: 2, width: 160, height: 40), 1, .changed)
        let asking = Fixtures.press(state, .down, .character("t")).0
        let text = DashboardView.view(asking).text
        XCTAssertTrue(text.contains("ED25519 \(Fixtures.otherEd25519.sha256Fingerprint)"), text)
    }
}
