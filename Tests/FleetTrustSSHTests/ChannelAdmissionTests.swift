import Foundation
import XCTest
@testable import FleetTrustSSH

/// The places for connections waiting on a control master's accept: past them a connection
/// sleeps (no retrying `connect`) until a place is given back, its deadline, or its cancel.
final class ChannelAdmissionTests: XCTestCase {
    func testPastItsPlacesAConnectionWaitsUntilAPlaceIsGivenBack() {
        let admission = ChannelAdmission(capacity: 2)
        let cancellation = ProbeCancellation()
        XCTAssertTrue(admission.enter(deadline: .now + .seconds(1), cancellation: cancellation))
        XCTAssertTrue(admission.enter(deadline: .now + .seconds(1), cancellation: cancellation))
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { admission.leave() }
        let started = ContinuousClock.now
        XCTAssertTrue(admission.enter(deadline: .now + .seconds(5), cancellation: cancellation))
        let waited = ContinuousClock.now - started
        XCTAssertGreaterThanOrEqual(waited, .milliseconds(250), "it waited for the place")
        XCTAssertLessThan(waited, .seconds(2), "woken by the place given back, not by its deadline")
    }

    func testAWaitEndsAtItsDeadlineOrAtOnceWhenTheProbeIsCancelled() {
        let admission = ChannelAdmission(capacity: 1)
        XCTAssertTrue(admission.enter(deadline: .now + .seconds(1), cancellation: ProbeCancellation()))
        let started = ContinuousClock.now
        XCTAssertFalse(admission.enter(deadline: .now + .milliseconds(300), cancellation: ProbeCancellation()))
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, .milliseconds(300))

        let cancellation = ProbeCancellation()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { cancellation.cancel() }
        let begun = ContinuousClock.now
        XCTAssertFalse(admission.enter(deadline: .now + .seconds(10), cancellation: cancellation))
        XCTAssertLessThan(ContinuousClock.now - begun, .seconds(1), "within a tenth of a second of the cancel")

        admission.leave()
        XCTAssertTrue(admission.enter(deadline: .now + .milliseconds(100), cancellation: ProbeCancellation()),
                      "a wait that gave up took no place")
    }
}
