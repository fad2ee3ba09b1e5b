import FleetTrustCore
@testable import FleetTrustDashboard
import XCTest

final class HostListTests: XCTestCase {
    func testProbeResultFillsInKeyTypesAndFingerprintOnTheHostsRow() {
        var state = Fixtures.state(hosts: 3)
        XCTAssertFalse(DashboardView.view(state).text.contains(Fixtures.ed25519Fingerprint))
        state = Fixtures.probed(state, 1, .new)
        let row = DashboardView.view(state).lines[DashboardView.listStartRow + 1].text
        XCTAssertTrue(row.contains("host1"), row)
        XCTAssertTrue(row.contains("ED25519 ECDSA"), row)
        XCTAssertTrue(row.contains(Fixtures.ed25519Fingerprint), row)
        XCTAssertTrue(row.contains("N new"), row)
    }

    func testGroupsGetAColumnWhenTheTerminalHasRoomLeftForThem() {
        var wide = Fixtures.state(hosts: 2, width: 220)
        wide.rows[0].host.groups = ["web", "prod"]
        let screen = DashboardView.view(wide)
        XCTAssertTrue(screen.lines[DashboardView.listStartRow - 1].text.contains("GROUPS"))
        XCTAssertTrue(screen.lines[DashboardView.listStartRow].text.contains("web,prod"), screen.lines[DashboardView.listStartRow].text)
        var narrow = Fixtures.state(hosts: 2, width: 160)
        narrow.rows[0].host.groups = ["web", "prod"]
        narrow = Fixtures.probed(narrow, 0, .new)
        let line = DashboardView.view(narrow).lines[DashboardView.listStartRow].text
        XCTAssertFalse(DashboardView.view(narrow).lines[DashboardView.listStartRow - 1].text.contains("GROUPS"))
        XCTAssertTrue(line.contains(Fixtures.ed25519Fingerprint), "the full fingerprint wins over groups: \(line)")
    }

    func testEveryStatusHasItsOwnLetterAndRole() {
        var state = Fixtures.state(hosts: 5)
        let statuses: [HostStatus] = [.trusted, .new, .changed, .revoked, .unreachable]
        for (index, status) in statuses.enumerated() { state = Fixtures.probed(state, index, status) }
        let screen = DashboardView.view(state)
        for (index, status) in statuses.enumerated() {
            let line = screen.lines[DashboardView.listStartRow + index]
            XCTAssertTrue(line.text.contains("\(status.letter) "), line.text)
            XCTAssertTrue(line.spans.contains { $0.role == StyleRole.status(status) }, "\(status)")
        }
        XCTAssertEqual(Set(HostStatus.allCases.map(\.letter)).count, HostStatus.allCases.count)
    }

    func testKeyTypesNameACertificateOnceAndEachPlainTypeOnce() throws {
        var state = Fixtures.state(hosts: 1)
        let certificate = try HostKey(type: "ssh-ed25519-cert-v01@openssh.com", blob: Fixtures.certificateBlob)
        state = Fixtures.probed(state, 0, .new, keys: [certificate, Fixtures.ed25519, Fixtures.ecdsa])
        let row = DashboardView.view(state).lines[DashboardView.listStartRow].text
        XCTAssertTrue(row.contains(" CERT ED25519 ECDSA "), row)
        XCTAssertTrue(row.contains(Fixtures.ed25519Fingerprint), row)
    }

    func testAHostWithOnlyItsEd25519KeyRecordedReadsTrustedAndNotChanged() {
        var state = Fixtures.state(hosts: 2)
        state = Fixtures.probed(state, 1, .trusted)
        let judged = try! XCTUnwrap(state.rows[1].judged)
        XCTAssertEqual(judged.keys.map(\.verdict), [.trusted, .notRecorded], "ECDSA is not recorded, as scan says")
        XCTAssertEqual(judged.knownHostsAnswer, .trusted)
        let row = DashboardView.view(state).lines[DashboardView.listStartRow + 1].text
        XCTAssertFalse(row.contains("CHANGED"), row)
        XCTAssertTrue(row.contains(" ok "), row)
        state = Fixtures.probed(state, 1, .changed)
        let changedRow = DashboardView.view(state).lines[DashboardView.listStartRow + 1].text
        XCTAssertTrue(changedRow.contains("CHANGED"), changedRow)
    }

    func testUnreachableHostShowsTheStageAndReason() {
        let state = Fixtures.probed(Fixtures.state(hosts: 1), 0, .unreachable)
        XCTAssertTrue(DashboardView.view(state).text.contains("connect failed: connection refused"))
    }

    func testMovingStopsAtBothEnds() {
        var state = Fixtures.press(Fixtures.state(hosts: 3), .up, .up).0
        XCTAssertEqual(state.selectedIndex, 0)
        state = Fixtures.press(state, .down, .character("j"), .down, .down).0
        XCTAssertEqual(state.selectedIndex, 2)
        state = Fixtures.press(state, .character("g")).0
        XCTAssertEqual(state.selectedIndex, 0)
        state = Fixtures.press(state, .character("G")).0
        XCTAssertEqual(state.selectedIndex, 2)
    }

    func testPageDownScrollsAndKeepsTheSelectionOnScreen() {
        let state = Fixtures.press(Fixtures.state(hosts: 100, height: 20), .pageDown, .pageDown).0
        XCTAssertEqual(state.cursor, 2 * state.listHeight)
        let screen = DashboardView.view(state)
        XCTAssertTrue(screen.lines.contains { $0.fill == .selected && $0.text.contains("host\(state.cursor) ") })
        XCTAssertEqual(screen.lines.count, 20)
    }

    func testGoingToTheEndOfTenThousandHostsShowsTheLastOneOnAFullScreen() {
        var state = Fixtures.state(hosts: 10_000, height: 45)
        state = Fixtures.probed(state, 9_999, .new)
        state = Fixtures.press(state, .character("G")).0
        let screen = DashboardView.view(state)
        XCTAssertEqual(screen.lines.count, 45)
        XCTAssertTrue(screen.lines[44 - 1].text.contains("host9999"), screen.text)
        XCTAssertTrue(screen.text.contains("10000 hosts"))
    }

    func testFilterNarrowsAsYouTypeAndEnterSelectsTheFirstMatch() {
        var state = Fixtures.press(Fixtures.state(hosts: 30), .down, .down, .character("/")).0
        state = Fixtures.type(state, "host2")
        XCTAssertEqual(state.visible, [2] + Array(20...29))
        state = Fixtures.press(state, .down, .enter).0
        XCTAssertEqual(state.mode, .list)
        XCTAssertEqual(state.selectedIndex, 2)
        XCTAssertEqual(state.filterText, "host2")
        XCTAssertTrue(DashboardView.view(state).text.contains("/host2"))
    }

    func testEscapeInTheFilterClearsIt() {
        var state = Fixtures.type(Fixtures.press(Fixtures.state(hosts: 30), .character("/")).0, "host1")
        state = Fixtures.press(state, .escape).0
        XCTAssertEqual(state.filterText, "")
        XCTAssertEqual(state.visible.count, 30)
    }

    func testCtrlUInTheFilterClearsTheLineAndKeepsThePromptOpen() {
        var state = Fixtures.type(Fixtures.press(Fixtures.state(hosts: 30), .character("/")).0, "no-such-host")
        XCTAssertEqual(state.visible.count, 0)
        state = Fixtures.type(Fixtures.press(state, .clearLine).0, "host1")
        XCTAssertEqual(state.filterText, "host1")
        XCTAssertEqual(state.mode, .filterInput)
        XCTAssertEqual(state.visible.count, 11, "host1 and host10 to host19")
    }

    func testStatusFilterCyclesThroughAttentionNewChangedUnreachable() {
        var state = Fixtures.state(hosts: 4)
        state = Fixtures.probed(state, 0, .trusted)
        state = Fixtures.probed(state, 1, .new)
        state = Fixtures.probed(state, 2, .changed)
        state = Fixtures.probed(state, 3, .unreachable)
        var seen: [StatusFilter: [Int]] = [:]
        for _ in StatusFilter.allCases {
            state = Fixtures.press(state, .character("f")).0
            seen[state.statusFilter] = state.visible
        }
        XCTAssertEqual(state.statusFilter, .all)
        XCTAssertEqual(seen[.attention], [1, 2, 3])
        XCTAssertEqual(seen[.new], [1])
        XCTAssertEqual(seen[.changed], [2])
        XCTAssertEqual(seen[.unreachable], [3])
        XCTAssertEqual(seen[.trusted], [0])
    }

    func testSortByStatusPutsChangedFirstAndKeepsTheSelectedHostSelected() {
        var state = Fixtures.state(hosts: 4)
        state = Fixtures.probed(state, 0, .trusted)
        state = Fixtures.probed(state, 3, .changed)
        state = Fixtures.press(state, .down).0
        state = Fixtures.press(state, .character("s")).0
        XCTAssertEqual(state.sort, .status)
        XCTAssertEqual(state.visible.first, 3)
        XCTAssertEqual(state.visible.last, 0)
        XCTAssertEqual(state.selectedIndex, 1)
    }

    func testSortByAddressOrdersNumbersNumerically() {
        let hosts = ["10.0.0.10", "10.0.0.9", "10.0.0.100"].map { InventoryHost(name: $0) }
        var state = DashboardState(settings: Fixtures.settings, hosts: hosts, size: TerminalSize(width: 120, height: 20))
        state = Fixtures.press(state, .character("s"), .character("s"), .character("s")).0
        XCTAssertEqual(state.sort, .address)
        XCTAssertEqual(state.visible.map { state.rows[$0].host.name }, ["10.0.0.9", "10.0.0.10", "10.0.0.100"])
    }

    func testClickingARowSelectsIt() {
        let state = DashboardUpdate.update(Fixtures.state(hosts: 10), .click(row: DashboardView.listStartRow + 4)).0
        XCTAssertEqual(state.selectedIndex, 4)
        let outside = DashboardUpdate.update(state, .click(row: 0)).0
        XCTAssertEqual(outside.selectedIndex, 4)
    }

    func testShrinkingTheTerminalKeepsTheSelectionVisibleAndDropsColumns() {
        var state = Fixtures.press(Fixtures.state(hosts: 100, width: 160, height: 45), .pageDown).0
        state = DashboardUpdate.update(state, .resize(TerminalSize(width: 70, height: 12))).0
        let screen = DashboardView.view(state)
        XCTAssertEqual(screen.lines.count, 12)
        XCTAssertTrue(screen.lines.allSatisfy { $0.width <= 70 })
        XCTAssertTrue(screen.lines.contains { $0.fill == .selected })
        XCTAssertFalse(screen.text.contains("METHOD"))
        XCTAssertTrue(screen.text.contains("NAME"))
    }

    func testMarkingWithSpaceMarksAndMovesOn() {
        let state = Fixtures.press(Fixtures.state(hosts: 3), .character(" "), .character(" ")).0
        XCTAssertEqual(state.markedIndices, [0, 1])
        XCTAssertEqual(state.selectedIndex, 2)
        XCTAssertTrue(DashboardView.view(state).lines[DashboardView.listStartRow].text.hasPrefix("*"))
    }

    func testRescanMarksTheHostScanningAndAsksForAProbe() {
        let state = Fixtures.probed(Fixtures.state(hosts: 3), 0, .new)
        let (next, effects) = Fixtures.press(state, .character("r"))
        XCTAssertEqual(effects, [.probe([0])])
        XCTAssertTrue(next.rows[0].scanning)
        XCTAssertTrue(next.discovery.running)
        XCTAssertEqual(Fixtures.press(next, .character("R")).1, [.probe([1, 2])])
    }

    func testProgressBarShowsWhileDiscoveryRuns() {
        var state = Fixtures.state(hosts: 4)
        _ = DashboardUpdate.startProbe([0, 1, 2, 3], in: &state)
        state = Fixtures.probed(state, 0, .new)
        XCTAssertTrue(DashboardView.view(state).text.contains("discovery 1/4"))
        for index in 1...3 { state = Fixtures.probed(state, index, .new) }
        XCTAssertFalse(DashboardView.view(state).text.contains("discovery"))
    }

    func testAtOneHundredTwentyColumnsStatusVerdictPinAndMethodAreReadableInFull() {
        var hosts = Fixtures.hosts(2)
        hosts[1].name = "web-frontend-01.prod.example.com"
        var state = DashboardState(settings: Fixtures.settings, hosts: hosts, size: TerminalSize(width: 120, height: 20))
        state = Fixtures.probed(state, 1, .trusted)
        let screen = DashboardView.view(state)
        let header = screen.lines[DashboardView.listStartRow - 1].text
        for title in ["STATUS", "NAME", "KNOWN_H", "PIN", "METHOD"] { XCTAssertTrue(header.contains(title), header) }
        let row = screen.lines[DashboardView.listStartRow + 1].text
        XCTAssertTrue(row.contains("T trusted"), row)
        XCTAssertTrue(row.contains(" ok "), row)
        XCTAssertTrue(row.contains(" kh"), row)
        XCTAssertTrue(row.contains("web-frontend-01.prod.example.com "), "the name gets the room it needs first: \(row)")
        XCTAssertTrue(DashboardView.view(state).lines.last!.text.contains("? "), "the footer keeps ? and q")
        XCTAssertTrue(DashboardView.view(state).lines.last!.text.contains("q "), "the footer keeps ? and q")
    }
}
