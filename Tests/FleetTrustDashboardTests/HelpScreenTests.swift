import FleetTrustCore
@testable import FleetTrustDashboard
import Foundation
import XCTest

/// The help screen is whole at 80×24: it wraps and scrolls, and its legend has every letter.
final class HelpScreenTests: XCTestCase {
    func testAt80x24TheHelpScrollsToItsLastLineAndAnyOtherKeyGoesBack() {
        var state = Fixtures.press(Fixtures.state(hosts: 2, width: 80, height: 24), .character("?")).0
        XCTAssertEqual(state.mode, .help)
        let last = HelpView.lines(width: 80).last!.text.trimmingCharacters(in: .whitespaces)
        XCTAssertTrue(last.hasSuffix("host name."), last)
        XCTAssertFalse(DashboardView.view(state).text.contains(last), "the whole help fits 24 lines: no need to scroll")
        for _ in 0..<60 where !DashboardView.view(state).text.contains(last) { state = Fixtures.press(state, .character("j")).0 }
        XCTAssertTrue(DashboardView.view(state).text.contains(last), DashboardView.view(state).text)
        XCTAssertEqual(state.mode, .help)
        for line in DashboardView.view(state).lines { XCTAssertLessThanOrEqual(line.width, 80) }
        let back = Fixtures.press(state, .character("x")).0
        XCTAssertEqual(back.mode, .list)
        XCTAssertEqual(back.detailScroll, 0)
    }

    func testTheLegendNamesEveryStatusLetterTLSOnesIncluded() {
        let text = HelpView.lines(width: 200).map(\.text).joined(separator: "\n")
        for status in HostStatus.allCases {
            XCTAssertTrue(text.contains("\(status.letter) \(status.rawValue)"), "\(status) missing from the legend")
        }
    }

    func testTheStatusColumnHoldsTheLongestStatusWord() {
        let columns = Columns.layout(width: 200)
        let status = columns.widths.first { $0.0 == .status }!.1
        XCTAssertGreaterThanOrEqual(status, DisplayWidth.of("M name-mismatch"))
    }
}
