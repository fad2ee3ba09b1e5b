import FleetTrustCore
@testable import FleetTrustDashboard
import XCTest

/// The footer offers an action exactly when its key takes it: both read the judged host's
/// `HostActions`, so a hint never promises what the key then refuses, nor hides what it does.
final class ActionHintTests: XCTestCase {
    func testEveryActionHintIsShownExactlyWhenItsKeyActs() {
        for status in [HostStatus.trusted, .new, .changed, .revoked, .pinMismatch, .unreachable] {
            let state = Fixtures.probed(Fixtures.state(hosts: 1), 0, status)
            let hinted = Set(StatusLineView.actionHints(state).map(\.0))
            for key in ["t", "p", "x", "c"] {
                let (after, effects) = Fixtures.press(state, .character(Character(key)))
                var acted = !effects.isEmpty
                if case .confirm = after.mode { acted = true }
                XCTAssertEqual(hinted.contains(key), acted, "\(status): the hint for \(key) and what \(key) does disagree")
            }
        }
    }

    func testTheFactsAreTheJudgedHostsNotTheDashboards() {
        let state = Fixtures.probed(Fixtures.state(hosts: 2), 0, .trusted)
        let trusted = state.rows[0].judged!.actions
        XCTAssertTrue(trusted.connect)
        XCTAssertEqual(trusted.trust, .refused(.alreadyTrusted))
        // A pin vouches only for keys something besides this probe's other connections vouches
        // for: the key ssh meets (and known_hosts trusts); the ECDSA key came over a connection of its own.
        XCTAssertEqual(trusted.pin, .keys([Fixtures.ed25519]))
        XCTAssertEqual(trusted.pinWithheld, [Fixtures.ecdsa])
        XCTAssertNil(trusted.forgetAlarm)
        let changed = Fixtures.probed(state, 1, .changed).rows[1].judged!.actions
        guard case .replace(let replacement) = changed.trust else { return XCTFail("a changed host is replaced: \(changed.trust)") }
        XCTAssertEqual(replacement.superseded.count, 1)
        XCTAssertEqual(changed.pin, .inAlarm(.changed))
        XCTAssertEqual(changed.forgetAlarm, .changed)
        XCTAssertFalse(changed.connect)
    }
}
