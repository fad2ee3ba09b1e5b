import FleetTrustCore
@testable import FleetTrustDashboard
import XCTest

final class DetailViewTests: XCTestCase {
    func testDetailShowsEveryKeyInFullWithRandomartSideBySide() {
        var state = Fixtures.probed(Fixtures.state(hosts: 1, width: 120, height: 60), 0, .new)
        state = Fixtures.press(state, .enter).0
        XCTAssertEqual(state.mode, .detail)
        let text = DashboardView.view(state).text
        XCTAssertTrue(text.contains(Fixtures.ed25519Fingerprint))
        XCTAssertTrue(text.contains(Fixtures.ecdsa.sha256Fingerprint))
        XCTAssertFalse(text.contains("MD5:"))
        let left = Randomart.draw(Fixtures.ed25519), right = Randomart.draw(Fixtures.ecdsa)
        XCTAssertTrue(text.contains(left[3] + "  " + right[3]), text)
        XCTAssertTrue(text.contains("SSH-2.0-OpenSSH_9.2p1"))
        XCTAssertTrue(text.contains("known_hosts name: [10.0.0.0]:2200"))
    }

    func testACertificateShowsItsPrincipalsValidityAndSigningCA() throws {
        let certificate = try HostKey(type: "ssh-ed25519-cert-v01@openssh.com", blob: Fixtures.certificateBlob)
        var state = Fixtures.state(hosts: 1, height: 80)
        state = Fixtures.press(Fixtures.probed(state, 0, .new, keys: [certificate, Fixtures.ed25519]), .enter).0
        let text = DashboardView.view(state).text
        let parsed = try HostCertificate(certificate)
        XCTAssertTrue(text.contains("certificate id \"test\" serial 0 principals: host0"), text)
        XCTAssertTrue(text.contains("valid always to forever, signed by CA \(parsed.signatureKey.sha256Fingerprint)"), text)
    }

    func testMShowsMD5FingerprintsAsSshKeygenWritesThem() {
        let state = Fixtures.press(Fixtures.probed(Fixtures.state(hosts: 1, height: 60), 0, .new), .enter, .character("m")).0
        XCTAssertTrue(DashboardView.view(state).text.contains(Fixtures.ed25519.md5Fingerprint))
    }

    func testEscapeLeavesTheDetailAndJKScroll() {
        let state = Fixtures.press(Fixtures.probed(Fixtures.state(hosts: 1), 0, .new), .enter, .character("j"), .character("j"))
        XCTAssertEqual(state.0.detailScroll, 2)
        XCTAssertEqual(Fixtures.press(state.0, .escape).0.mode, .list)
    }

    func testChangedKeyDetailShowsTheRecordedFingerprintAndWhereItIs() {
        let state = Fixtures.press(Fixtures.probed(Fixtures.state(hosts: 1, height: 60), 0, .changed), .enter).0
        let screen = DashboardView.view(state)
        XCTAssertTrue(screen.text.contains("recorded instead \(Fixtures.otherEd25519.sha256Fingerprint) at /tmp/kh:7"), screen.text)
        XCTAssertEqual(screen.role(of: "known_hosts: changed"), .danger)
    }

    func testTheListMarksAProxiedHostAndItsDetailShowsEveryHopInOrder() {
        var host = InventoryHost(name: "app", address: "10.1.2.3", routing: HostRoute.parse("ProxyJump ops@gate:2200,inner"))
        var state = DashboardState(settings: Fixtures.settings, hosts: [host, InventoryHost(name: "direct", address: "10.1.2.4")],
                                   size: TerminalSize(width: 160, height: 40))
        host = state.rows[0].host
        let judged = Fixtures.judged(host, Fixtures.result(host), status: .new)
        state = DashboardUpdate.update(state, .hostsUpdated([HostUpdate(index: 0, judged: judged, probed: true)])).0
        let list = DashboardView.view(state).text
        XCTAssertTrue(list.contains("10.1.2.3:22 via ops@gate:2200,inner"), list)
        XCTAssertFalse(list.contains("10.1.2.4:22 via"), list)
        let detail = DashboardView.view(Fixtures.press(state, .enter).0).text
        XCTAssertTrue(detail.contains("route: ops@gate:2200 -> inner -> 10.1.2.3:22"), detail)
    }

    func testFailureDetailGivesStageCodeAndReason() {
        let state = Fixtures.press(Fixtures.probed(Fixtures.state(hosts: 1), 0, .unreachable), .enter).0
        XCTAssertTrue(DashboardView.view(state).text.contains("failed at connect (connection-refused): connection refused"))
    }

    func testEscapeSequencesFromTheServerNeverReachTheScreen() {
        var state = Fixtures.state(hosts: 1, height: 60)
        var result = Fixtures.result(state.rows[0].host)
        result.banner = "hello\u{1b}]52;c;ZXZpbA==\u{07}\nsecond\u{1b}[2J line"
        result.serverVersion = "SSH-2.0-evil\u{1b}[31m"
        let judged = Fixtures.judged(state.rows[0].host, result, status: .new)
        state = DashboardUpdate.update(state, .hostsUpdated([HostUpdate(index: 0, judged: judged, probed: true)])).0
        let screen = DashboardView.view(Fixtures.press(state, .enter).0)
        XCTAssertFalse(screen.text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, screen.text)
        XCTAssertTrue(screen.text.contains("hello?]52;c;ZXZpbA==?"))
        XCTAssertTrue(screen.text.contains("second?[2J line"))
    }

    func testHelpListsEveryBinding() {
        let text = DashboardView.view(Fixtures.press(Fixtures.state(height: 40), .character("?")).0).text
        for binding in KeyBindings.list {
            XCTAssertTrue(text.contains(binding.help), binding.help)
        }
        XCTAssertEqual(Set(KeyBindings.list.map(\.action)), Set(DashboardAction.allCases))
    }

    func testStatusLineOffersOnlyTheKeysThatApply() {
        var state = Fixtures.probed(Fixtures.state(hosts: 2), 0, .new)
        state = Fixtures.probed(state, 1, .trusted)
        let onNew = DashboardView.view(state).lines.last!.text
        XCTAssertTrue(onNew.contains(" t  trust"), onNew)
        XCTAssertFalse(onNew.contains("connect"), onNew)
        let onTrusted = DashboardView.view(Fixtures.press(state, .down).0).lines.last!.text
        XCTAssertTrue(onTrusted.contains("connect"), onTrusted)
        XCTAssertFalse(onTrusted.contains(" t  trust"), onTrusted)
    }
}
