import XCTest
import Synchronization
@testable import FleetTrustSSH
import FleetTrustCore

/// The scan-wide window of connections in flight (additive increase, multiplicative decrease on
/// timeouts) and the retry it grants a timeout that the scan's own load may explain.
final class ConnectionWindowTests: XCTestCase {
    func testATimeoutAmongManyConnectionsHalvesTheWindowToHalfOfWhatWasInFlight() {
        var window = ConnectionWindow(floor: 16)
        let tickets = (0..<100).map { _ in window.open() }
        XCTAssertEqual(window.limit, Int.max, "unbounded until something times out")
        window.close(tickets[99], succeeded: false, timedOut: true)
        XCTAssertEqual(window.limit, 50)
        XCTAssertEqual(window.inFlight, 99)
        XCTAssertFalse(window.hasRoom, "99 in flight under a limit of 50: nothing new starts")
    }

    func testTimeoutsOfOneRoundDecreaseOnceAndALaterRoundAgainNeverBelowTheFloor() {
        var window = ConnectionWindow(floor: 16)
        let first = (0..<100).map { _ in window.open() }
        for ticket in first { window.close(ticket, succeeded: false, timedOut: true) }
        XCTAssertEqual(window.limit, 50, "the connections of one round, timing out together, decrease it once")
        let second = (0..<50).map { _ in window.open() }
        XCTAssertTrue(window.close(second[49], succeeded: false, timedOut: true))
        XCTAssertEqual(window.limit, 25, "a connection started after the decrease decreases it again")
        XCTAssertTrue(window.close(second[48], succeeded: false, timedOut: true), "still retried: it ran beside 48 others")
        XCTAssertEqual(window.limit, 25, "but started before the last decrease: the window stays")
        for ticket in second.dropLast(2) { window.close(ticket, succeeded: false, timedOut: false) }
        let third = (0..<20).map { _ in window.open() }
        window.close(third[19], succeeded: false, timedOut: true)
        XCTAssertEqual(window.limit, 16, "never below the floor")
    }

    func testATimeoutOfAConnectionThatRanWithFewOthersLeavesTheWindowAlone() {
        var window = ConnectionWindow(floor: 16)
        let tickets = (0..<16).map { _ in window.open() }
        XCTAssertFalse(window.close(tickets[15], succeeded: false, timedOut: true),
                       "16 in flight cannot load the machine: the host is slow or silent")
        XCTAssertEqual(window.limit, Int.max)
    }

    func testEverySuccessRaisesTheWindowByOne() {
        var window = ConnectionWindow(floor: 4)
        let tickets = (0..<40).map { _ in window.open() }
        window.close(tickets[39], succeeded: false, timedOut: true)
        XCTAssertEqual(window.limit, 20)
        for ticket in tickets.prefix(5) { window.close(ticket, succeeded: true, timedOut: false) }
        XCTAssertEqual(window.limit, 25)
        window.close(tickets[5], succeeded: false, timedOut: false)
        XCTAssertEqual(window.limit, 25, "a failure that is not a timeout neither raises nor lowers it")
    }

    func testATimeoutBesideManyIsRetriedAndALoneOneIsReportedAtOnce() throws {
        let politeness = TargetPoliteness(ceiling: 1000, windowFloor: 4)
        let permits = (0..<10).compactMap { politeness.acquire("[127.0.0.1]:\(2000 + $0)", orWhenFree: { _ in }) }
        XCTAssertEqual(permits.count, 10)
        var backOff = TargetPoliteness.BackOff()
        XCTAssertNotNil(politeness.release(permits[9], after: AttemptOutcome(failure: ProbeFailures.bannerTimeout), backOff: &backOff),
                        "ran beside 9 others: retried")
        XCTAssertTrue(backOff.retried)
        let next = politeness.acquire("[127.0.0.1]:2010", orWhenFree: { _ in })
        XCTAssertNotNil(next, "a silent server is no evidence of load: the window stays open")
        next.map { politeness.release($0) }
        XCTAssertNil(backOff.next(after: .silent), "one retry for a server that never spoke, then it is reported")
        XCTAssertNotNil(backOff.next(after: .slow), "a slow exchange keeps its own retries")
        XCTAssertNotNil(backOff.next(after: .slow))
        XCTAssertNotNil(backOff.next(after: .slow))
        XCTAssertNil(backOff.next(after: .slow), "three for an exchange that was slow")
        XCTAssertNotNil(backOff.next(after: .refused), "refusals keep their own retries")
        for permit in permits.prefix(9) { politeness.release(permit) }

        let waiting = (0..<10).compactMap { _ in politeness.acquire("[127.0.0.1]:3000", orWhenFree: { _ in }) }
        var late = TargetPoliteness.BackOff()
        XCTAssertNil(politeness.release(waiting[9], after: AttemptOutcome(failure: KeyExchangeFailures.transport(.timeout, stage: .keyExchange)),
                                        backOff: &late), "no KEXINIT came: a server waiting for the client's, not a slow one")
        for permit in waiting.prefix(9) { politeness.release(permit) }

        let lone = TargetPoliteness(ceiling: 8, windowFloor: 4)
        var alone = TargetPoliteness.BackOff()
        let permit = try XCTUnwrap(lone.acquire("[127.0.0.1]:22", orWhenFree: { _ in }))
        XCTAssertNil(lone.release(permit, after: AttemptOutcome(failure: KeyExchangeFailures.transport(.timeout, stage: .keyExchange)),
                                  backOff: &alone), "alone on the machine: a lower window could not help")
    }

    func testABannerTimeoutOfAServerThatAnsweredBeforeIsRetriedAsASlowOne() throws {
        let politeness = TargetPoliteness(ceiling: 1000, windowFloor: 2)
        let permits = (0..<4).compactMap { _ in politeness.acquire("[127.0.0.3]:22", orWhenFree: { _ in }) }
        var answered = TargetPoliteness.BackOff()
        XCTAssertNil(politeness.release(permits[0], after: AttemptOutcome(serverVersion: "SSH-2.0-OpenSSH_9.2"), backOff: &answered))
        var backOff = TargetPoliteness.BackOff()
        for permit in permits[1...] {
            XCTAssertNotNil(politeness.release(permit, after: AttemptOutcome(failure: ProbeFailures.bannerTimeout), backOff: &backOff),
                            "the server answered this scan before: it is slow, not silent")
        }
        XCTAssertNil(backOff.next(after: .slow), "three retries, then the timeout is reported")
    }

    func testAConnectTimeoutIsRetriedOnceBesideManyAndAsASlowServersAtOneThatAnsweredBefore() throws {
        let politeness = TargetPoliteness(ceiling: 1000, windowFloor: 2)
        let permits = (0..<5).compactMap { _ in politeness.acquire("[127.0.0.3]:22", orWhenFree: { _ in }) }
        let elsewhere = try XCTUnwrap(politeness.acquire("[127.0.0.4]:22", orWhenFree: { _ in }))
        var silent = TargetPoliteness.BackOff()
        XCTAssertNotNil(politeness.release(elsewhere, after: AttemptOutcome(failure: ProbeFailures.connectTimeout), backOff: &silent),
                        "an address that never answered, beside many connections: the one retry of a silent server")
        XCTAssertNil(silent.next(after: .silent), "one retry only")
        var backOff = TargetPoliteness.BackOff()
        XCTAssertNil(politeness.release(permits[0], after: AttemptOutcome(serverVersion: "SSH-2.0-OpenSSH_9.2"), backOff: &backOff))
        XCTAssertNotNil(politeness.release(permits[1], after: AttemptOutcome(failure: ProbeFailures.connectTimeout), backOff: &backOff),
                        "a server that answered before and now lets a connect time out has a full listen queue")
        for permit in permits[2...] { politeness.release(permit) }
    }

    func testAQueuedAttemptIsGrantedWhenTheWindowHasRoomAgain() {
        let politeness = TargetPoliteness(ceiling: 1000, windowFloor: 2)
        let permits = (0..<8).compactMap { politeness.acquire("[127.0.0.2]:\(2000 + $0)", orWhenFree: { _ in }) }
        var backOff = TargetPoliteness.BackOff()
        _ = politeness.release(permits[7], after: AttemptOutcome(failure: KeyExchangeFailures.transport(.timeout, stage: .keyExchange),
                                                                 serverHostKeyAlgorithms: ["ssh-ed25519"]), backOff: &backOff)
        let granted = Atomic<Int>(0)
        XCTAssertNil(politeness.acquire("[127.0.0.2]:2007", orWhenFree: { _ in granted.add(1, ordering: .relaxed) }))
        for permit in permits.prefix(3) { politeness.release(permit) }
        XCTAssertEqual(granted.load(ordering: .relaxed), 0, "4 still in flight under a window of 4")
        politeness.release(permits[3])
        XCTAssertEqual(granted.load(ordering: .relaxed), 1)
    }

    func testOnlyTimeoutsAndRefusalsAreLoadSignals() {
        XCTAssertEqual(TargetPoliteness.loadSignal(ProbeFailures.bannerTimeout), .silent)
        XCTAssertEqual(TargetPoliteness.loadSignal(KeyExchangeFailures.transport(.timeout, stage: .keyExchange)), .slow)
        XCTAssertEqual(TargetPoliteness.loadSignal(ProbeFailures.closedBeforeBanner()), .refused)
        XCTAssertEqual(TargetPoliteness.loadSignal(ProbeFailures.connectTimeout), .silent, "a listen queue may overflow in a burst")
        XCTAssertNil(TargetPoliteness.loadSignal(ProbeFailures.cancelled))
    }
}
