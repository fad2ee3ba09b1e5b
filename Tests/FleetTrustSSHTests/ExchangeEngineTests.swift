import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet
@testable import FleetTrustSSH

/// The event-driven engine keeps many key exchanges in flight on a few threads, with the
/// politeness, cancellation and deadlines of a thread-driven attempt.
final class ExchangeEngineTests: XCTestCase {
    private static let fleet = Result { () throws -> TestFleet in
        var options = TestFleet.Options(hosts: 1)
        options.addressesPerHost = 1
        return try TestFleet(options)
    }

    override class func setUp() {
        super.setUp()
        _ = fleet
    }

    override class func tearDown() {
        if case .success(let fleet) = fleet { fleet.stop() }
        super.tearDown()
    }

    private func address(_ host: String, _ port: Int) throws -> SocketAddress {
        guard case .success(let addresses) = Resolver.resolve(host, port: port, deadline: .now + .seconds(1),
                                                              cancellation: ProbeCancellation()),
              let first = addresses.first else { throw CocoaError(.fileReadUnknown) }
        return first
    }

    private func request(_ address: SocketAddress, port: Int, offer: [String] = ["ssh-ed25519"], timeout: Duration,
                         cancellation: ProbeCancellation, politeness: TargetPoliteness) -> ExchangeRequest {
        ExchangeRequest(address: address, port: port, offer: .upFront(offer), timeout: timeout,
                        connectDeadline: .now + timeout, cancellation: cancellation, politeness: politeness)
    }

    private func threadCount() -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).count
    }

    func testThreeHundredConnectionsWaitingOnSilentServersTakeNoThreadEach() throws {
        let listeners = try (2..<8).map { try SilentListener(address: "127.0.0.\($0)") }
        defer { listeners.forEach { $0.close() } }
        let engine = ExchangeEngine(threads: 2)
        let politeness = TargetPoliteness(ceiling: 64)
        let threadsBefore = threadCount()
        let cancellations = (0..<300).map { _ in ProbeCancellation() }
        let outcomes = Gathered<AttemptOutcome>(count: cancellations.count)
        for (index, cancellation) in cancellations.enumerated() {
            let listener = listeners[index % listeners.count]
            engine.start(request(try address(listener.address, listener.port), port: listener.port, timeout: .seconds(120),
                                 cancellation: cancellation, politeness: politeness)) { outcomes.put($0, at: index) }
        }
        ThreadsWaitingOnIO.waitUntil("all 300 connections wait for their server's banner") {
            cancellations.allSatisfy { $0.activity == ProbeStage.banner.rawValue }
        }
        XCTAssertLessThanOrEqual(threadCount() - threadsBefore, 4, "300 connections in flight must not hold a thread each")
        let cancelled = ContinuousClock.now
        cancellations.forEach { $0.cancel() }
        let ended = outcomes.wait()
        XCTAssertLessThan(ContinuousClock.now - cancelled, .seconds(10), "a cancel must end a wait of 120 s at once")
        XCTAssertEqual(ended.count, 300)
        XCTAssertTrue(ended.allSatisfy { $0.failure == ProbeFailures.cancelled }, "\(Set(ended.compactMap(\.failure?.code)))")
    }

    func testAttemptsPastTheServersLimitWaitForAPermitAndEachProvesItsKey() throws {
        let endpoint = try Self.fleet.get().hosts[0].endpoints[0]
        let engine = ExchangeEngine(threads: 2)
        let politeness = TargetPoliteness(ceiling: 1)
        let target = try address(endpoint.address, endpoint.port)
        let offers = [["ssh-ed25519"], ["ecdsa-sha2-nistp256"], ["rsa-sha2-512"], ["ssh-ed25519"], ["rsa-sha2-256"]]
        let cancellation = ProbeCancellation()
        let outcomes = engine.run(offers.map {
            request(target, port: endpoint.port, offer: $0, timeout: .seconds(10), cancellation: cancellation,
                    politeness: politeness)
        })
        XCTAssertEqual(cancellation.handlersWaiting, 0, "an ended attempt must not stay reachable (and alive) through its host's cancel")
        XCTAssertEqual(outcomes.map { $0.key?.key.type }, ["ssh-ed25519", "ecdsa-sha2-nistp256", "ssh-rsa", "ssh-ed25519", "ssh-rsa"],
                       "\(outcomes.map { $0.failure.map(String.init(describing:)) ?? "ok" })")
        let fingerprints = Set(outcomes.compactMap { $0.key?.key.fingerprint })
        XCTAssertEqual(fingerprints.count, 3, "the same server proves the same three keys")
    }

    func testCancellingEndsAnAttemptStillWaitingForAPermit() throws {
        let silent = try SilentListener()
        defer { silent.close() }
        let engine = ExchangeEngine(threads: 1)
        let politeness = TargetPoliteness(ceiling: 1)
        let target = try address(silent.address, silent.port)
        let holding = ProbeCancellation(), waiting = ProbeCancellation()
        let held = Gathered<AttemptOutcome>(count: 1), queued = Gathered<AttemptOutcome>(count: 1)
        engine.start(request(target, port: silent.port, timeout: .seconds(120), cancellation: holding, politeness: politeness)) {
            held.put($0, at: 0)
        }
        ThreadsWaitingOnIO.waitUntil("the first attempt holds the only permit") { holding.activity == ProbeStage.banner.rawValue }
        engine.start(request(target, port: silent.port, timeout: .seconds(120), cancellation: waiting, politeness: politeness)) {
            queued.put($0, at: 0)
        }
        XCTAssertNil(waiting.activity, "the second attempt must wait for the permit, not connect")
        let cancelled = ContinuousClock.now
        waiting.cancel()
        XCTAssertEqual(queued.wait().map(\.failure), [ProbeFailures.cancelled])
        holding.cancel()
        XCTAssertEqual(held.wait().map(\.failure), [ProbeFailures.cancelled])
        XCTAssertLessThan(ContinuousClock.now - cancelled, .seconds(10))
        // The permit came back and the cancelled request left the queue: a new attempt gets it at once.
        XCTAssertNotNil(politeness.acquire(TargetPoliteness.key(target.numeric, port: silent.port), orWhenFree: { _ in }))
    }

    func testAStageWithoutProgressFailsAtItsDeadlineOnTheLoop() throws {
        let silent = try SilentListener()
        defer { silent.close() }
        let started = ContinuousClock.now
        let outcome = ExchangeEngine(threads: 1).run([
            request(try address(silent.address, silent.port), port: silent.port, timeout: .milliseconds(600),
                    cancellation: ProbeCancellation(), politeness: TargetPoliteness()),
        ])[0]
        let elapsed = ContinuousClock.now - started
        XCTAssertEqual(outcome.failure, ProbeFailures.bannerTimeout)
        XCTAssertGreaterThanOrEqual(elapsed, .milliseconds(550))
        XCTAssertLessThan(elapsed, .seconds(5))
    }

    func testDeadlinesComeDueSoonestFirst() {
        var heap = DeadlineHeap()
        let base = ContinuousClock.now
        var generator = SeededGenerator.announced("testDeadlinesComeDueSoonestFirst")
        let offsets = (0..<200).map { _ in Int.random(in: 0..<10_000, using: &generator) }
        for (token, offset) in offsets.enumerated() {
            heap.push(.init(deadline: base + .milliseconds(offset), token: UInt64(token), generation: 0))
        }
        XCTAssertNil(heap.popDue(at: base - .seconds(1)), "nothing is due before the soonest deadline")
        var popped: [Int] = []
        while let entry = heap.popDue(at: base + .seconds(20)) { popped.append(offsets[Int(entry.token)]) }
        XCTAssertEqual(popped, offsets.sorted())
        XCTAssertEqual(heap.milliseconds(untilNextFrom: base), -1, "an empty heap lets the loop sleep")
    }
}
