import Foundation
import FleetTrustCore

/// Where a host's connection attempts run: politely per address (`TargetPoliteness`), and the
/// key types of one host side by side once its server has said which it has.
///
/// Our key-exchange client's attempts to a direct address run on the `ExchangeEngine`'s event
/// loops, which wait on thousands of sockets at once and do each exchange's computing (about a
/// fifth of a millisecond) on the loop that saw its reply. What still blocks runs on `helpers`:
/// libssh's handshakes, and attempts through a bastion or ProxyCommand, whose channel opens with
/// blocking calls.
final class AttemptScheduler: Sendable {
    let politeness: TargetPoliteness
    /// Where our key-exchange client runs for direct addresses: a few event-loop threads.
    let engine: ExchangeEngine
    /// Threads for blocking attempts; they never submit work themselves, so a full pool only
    /// delays them, never deadlocks.
    private let helpers: WorkerThreads

    init(helperThreads: Int, politeness: TargetPoliteness = TargetPoliteness(), engine: ExchangeEngine = .shared) {
        self.politeness = politeness
        self.engine = engine
        self.helpers = WorkerThreads(limit: helperThreads)
    }

    /// Starts every attempt on a helper thread and returns at once; `done` gets each outcome with
    /// its index, on the thread that ran it.
    func start<Outcome: Sendable>(_ attempts: [@Sendable () -> Outcome], done: @escaping @Sendable (Int, Outcome) -> Void) {
        for (index, attempt) in attempts.enumerated() {
            helpers.submit { _ in done(index, attempt()) }
        }
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
