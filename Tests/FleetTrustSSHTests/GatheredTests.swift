import Foundation
import XCTest
@testable import FleetTrustSSH

/// A host's thread waits for a batch of connections that end on the engine's loop threads; the
/// last one wakes it after letting go of the lock, so a wake-up must never be lost: not when the
/// outcomes race in from many threads, not when the last one arrives before the wait begins.
final class GatheredTests: XCTestCase {
    /// Outcomes put from several threads at once reach the waiter, each at its own index.
    func testOutcomesFromManyThreadsWakeTheWaiterInIndexOrder() throws {
        for round in 0..<200 {
            let count = 1 + round % 8
            let gathered = Gathered<Int>(count: count)
            let received = waitOnAThread(for: gathered)
            for index in (0..<count).reversed() {
                Thread.detachNewThread { gathered.put(index * 10, at: index) }
            }
            let values = try received()
            XCTAssertEqual(values, (0..<count).map { $0 * 10 }, "round \(round)")
        }
    }

    /// Every outcome in before anyone waits: the wait returns at once, with no wake-up to miss.
    func testAWaitAfterTheLastOutcomeReturnsAtOnce() {
        let gathered = Gathered<String>(count: 2)
        gathered.put("b", at: 1)
        gathered.put("a", at: 0)
        XCTAssertEqual(gathered.wait(), ["a", "b"])
    }

    /// Starts `gathered.wait()` on a thread of its own; the returned function gives its result,
    /// failing (rather than hanging the suite) if the waiter is not woken within 10 s.
    private func waitOnAThread(for gathered: Gathered<Int>) -> () throws -> [Int] {
        let done = DispatchSemaphore(value: 0)
        let result = ResultBox()
        Thread.detachNewThread {
            result.value = gathered.wait()
            done.signal()
        }
        return {
            guard done.wait(timeout: .now() + 10) == .success else { throw LostWakeUp() }
            return result.value ?? []
        }
    }
}

private struct LostWakeUp: Error {}

private final class ResultBox: @unchecked Sendable {
    var value: [Int]?
}
