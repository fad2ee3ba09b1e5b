import Foundation
import FleetTrustCore

/// Where a host's connection attempts run: politely per address (`TargetPoliteness`), and the
/// key types of one host side by side once its server has said which it has.
///
/// Nothing here bounds how many attempts wait on the network at once: a waiting attempt costs a
/// blocked thread and a descriptor, which the pool budgets. The CPU a handshake costs (about a
/// fifth of a millisecond here) is spent on the thread that waited for it: handing it to another
/// thread would cost more than the work.
final class AttemptScheduler: Sendable {
    let politeness: TargetPoliteness
    /// Where our key-exchange client runs for direct addresses: a few event-loop threads.
    let engine: ExchangeEngine
    /// Threads for a host's second and later key types; they never submit work themselves, so a
    /// full pool only delays them, never deadlocks.
    private let helpers: WorkerThreads

    init(helperThreads: Int, politeness: TargetPoliteness = TargetPoliteness(), engine: ExchangeEngine = .shared) {
        self.politeness = politeness
        self.engine = engine
        self.helpers = WorkerThreads(limit: helperThreads)
    }

    /// Runs every attempt at once (the first on the calling thread) and returns their outcomes in order.
    func all<Outcome: Sendable>(_ attempts: [@Sendable () -> Outcome]) -> [Outcome] {
        guard let first = attempts.first else { return [] }
        guard attempts.count > 1 else { return [first()] }
        let gathered = Gathered<Outcome>(count: attempts.count)
        for (index, attempt) in attempts.enumerated().dropFirst() {
            helpers.submit { _ in gathered.put(attempt(), at: index) }
        }
        gathered.put(first(), at: 0)
        return gathered.wait()
    }
}
