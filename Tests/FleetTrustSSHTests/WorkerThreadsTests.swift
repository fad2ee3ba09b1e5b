import Foundation
import Synchronization
import XCTest
@testable import FleetTrustSSH

/// When a job is due, and so when its first timeout starts: at submission if a thread is free
/// for it, else when one comes free; never later because the OS was slow to run the thread.
final class WorkerThreadsTests: XCTestCase {
    private struct Run {
        var index: Int
        var due: ContinuousClock.Instant
        var started: ContinuousClock.Instant
        var ended: ContinuousClock.Instant
    }

    func testAJobIsDueWhenSubmittedOrWhenAThreadCameFreeForIt() {
        let workers = WorkerThreads(limit: 1)
        let runs = Mutex<[Run]>([])
        let done = DispatchSemaphore(value: 0)
        var submitted: [ContinuousClock.Instant] = []
        for index in 0..<3 {
            submitted.append(.now)
            workers.submit { due in
                let started = ContinuousClock.now
                // The job's work, not a wait: it holds its thread this long, which the test measures.
                usleep(100_000)
                runs.withLock { $0.append(Run(index: index, due: due, started: started, ended: .now)) }
                done.signal()
            }
        }
        for _ in 0..<3 { XCTAssertEqual(done.wait(timeout: .now() + 20), .success) }
        let ordered = runs.withLock { $0 }
        XCTAssertEqual(ordered.map(\.index), [0, 1, 2], "one thread runs the jobs in order of submission")
        XCTAssertGreaterThanOrEqual(ordered[0].due, submitted[0])
        XCTAssertLessThanOrEqual(ordered[0].due, ordered[0].started, "due before the thread got round to it")
        XCTAssertLessThan(ordered[0].due, submitted[1], "the first job was due when it was submitted, to a new thread")
        for index in 1..<3 {
            XCTAssertGreaterThanOrEqual(ordered[index].due, ordered[index - 1].ended, "job \(index) queued until the thread was free")
            XCTAssertLessThanOrEqual(ordered[index].due, ordered[index].started)
        }
    }

    func testTheFirstDeadlineCountsFromDueButLeavesASecondToAnswer() {
        let now = ContinuousClock.now
        XCTAssertEqual(HostProbe.firstDeadline(due: now - .milliseconds(600), timeout: .seconds(5), now: now),
                       now + .milliseconds(4400), "a thread that started 0.6 s late keeps its host's timeout")
        XCTAssertEqual(HostProbe.firstDeadline(due: now - .seconds(30), timeout: .seconds(5), now: now),
                       now + .seconds(1), "a thread that started after the whole timeout still waits a second")
        XCTAssertEqual(HostProbe.firstDeadline(due: now - .seconds(30), timeout: .milliseconds(300), now: now),
                       now + .milliseconds(300), "never more than the timeout itself")
        XCTAssertEqual(HostProbe.firstDeadline(due: now, timeout: .seconds(5), now: now), now + .seconds(5))
    }
}
