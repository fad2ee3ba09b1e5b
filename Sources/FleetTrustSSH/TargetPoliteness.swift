import Foundation
import FleetTrustCore

/// How many connections a scan keeps open to one server (one address and port) at once, and
/// what it does when the server refuses one for load.
///
/// A scan keeps hundreds of handshakes in flight, but one `sshd` drops new unauthenticated
/// connections past its `MaxStartups` (default `10:30:100`: some from 10, all from 100), closing
/// them before it identifies itself. So each endpoint gets at most `ceiling` connections at
/// once; a connection closed before the server's identification (or after only its
/// `Exceeded MaxStartups` line) counts as a refusal for load:
/// the endpoint's limit halves (down to one) and the attempt is retried after a growing, jittered
/// pause, a bounded number of times, so a busy server costs time, never a key. Each success
/// raises the limit by one again, up to the ceiling. Waiting for a permit or backing off does
/// not eat into an attempt's timeout: the timeout starts when the connection really starts.
final class TargetPoliteness: @unchecked Sendable {
    private struct Entry {
        var active = 0
        var limit: Int
        /// Attempts of the event-driven engine waiting for a permit, oldest first.
        var waiters: [(ticket: UInt64, grant: @Sendable () -> Void)] = []
    }

    /// Connections at once to one address, below a stock `sshd`'s `MaxStartups` start of 10.
    let ceiling: Int
    /// Retries after a refusal for load, before the refusal is reported as the host's failure.
    static let retries = 5
    static let firstPause: Duration = .milliseconds(200)

    private let condition = NSCondition()
    private var entries: [String: Entry] = [:]

    init(ceiling: Int = 8) {
        self.ceiling = max(1, ceiling)
    }

    /// Whether a failure is a server shedding load, which a later attempt may well get past:
    /// closed before its identification, or (OpenSSH 9.2's sshd) after writing only
    /// `Exceeded MaxStartups`.
    static func isRefusalForLoad(_ failure: ProbeFailure) -> Bool {
        guard failure.stage == .banner else { return false }
        return failure.code == .connectionClosed
            || failure.code == .notSSH && failure.message.description.contains("\"Exceeded MaxStartups\"")
    }

    /// Runs `attempt` (which opens one connection to `endpoint`) within the endpoint's limit;
    /// retries it, after a pause, while the server refuses it for load.
    /// `attempt` is told whether it is a fresh start (a retry, or one that waited for a permit),
    /// whose timeout must count from now.
    func run(_ endpoint: ProbeEndpoint, port: Int, cancellation: ProbeCancellation,
             _ attempt: (_ fresh: Bool) -> AttemptOutcome) -> AttemptOutcome {
        guard let numeric = endpoint.peerAddress else { return attempt(false) }
        let address = Self.key(numeric, port: port)
        var backOff = BackOff()
        while true {
            guard let waited = acquire(address, cancellation: cancellation) else {
                return AttemptOutcome(failure: ProbeFailures.cancelled)
            }
            let outcome = attempt(waited || backOff.retried)
            let refused = outcome.failure.map(Self.isRefusalForLoad) ?? false
            release(address, refused: refused)
            guard refused, let pause = backOff.next() else { return outcome }
            cancellation.enterBackOff()
            guard cancellation.sleep(pause) else { return AttemptOutcome(failure: ProbeFailures.cancelled) }
        }
    }

    /// The pauses before retrying a connection refused for load: `firstPause`, then doubling,
    /// each ±50 %, `retries` in all; shared by the thread-bound and the event-driven attempts.
    struct BackOff {
        private var tries = 0
        private var pause = TargetPoliteness.firstPause

        /// Whether a retry has been taken (its timeout then counts from its own start).
        var retried: Bool { tries > 0 }

        /// The next pause, nil when the retries are spent.
        mutating func next() -> Duration? {
            guard tries < TargetPoliteness.retries else { return nil }
            tries += 1
            defer { pause = pause * 2 }
            return pause * Double.random(in: 0.5...1.5)
        }
    }

    /// The name permits are counted under: one server is one address and port.
    static func key(_ numeric: String, port: Int) -> String { "[\(numeric)]:\(port)" }

    /// Takes a permit for `address` at once (true), or queues `granted`, which is called with
    /// the permit taken, on the thread that freed it, once one is free (false). For callers that
    /// cannot block (`ExchangeEngine`); each grant is returned with `release`.
    func acquire(_ address: String, ticket: UInt64 = 0, orWhenFree granted: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        var entry = entries[address] ?? Entry(limit: ceiling)
        if entry.active < entry.limit && entry.waiters.isEmpty {
            entry.active += 1
            entries[address] = entry
            return true
        }
        entry.waiters.append((ticket, granted))
        entries[address] = entry
        return false
    }

    /// Takes back a queued request (a cancelled attempt); false when its grant is already on
    /// its way, which the attempt must then return.
    func withdraw(_ address: String, ticket: UInt64) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard var entry = entries[address], let index = entry.waiters.firstIndex(where: { $0.ticket == ticket }) else {
            return false
        }
        entry.waiters.remove(at: index)
        entries[address] = entry.active == 0 && entry.limit == ceiling && entry.waiters.isEmpty ? nil : entry
        return true
    }

    /// Takes a permit; whether it had to wait for one, nil when cancelled meanwhile.
    private func acquire(_ address: String, cancellation: ProbeCancellation) -> Bool? {
        condition.lock()
        defer { condition.unlock() }
        var waited = false
        while true {
            if cancellation.isCancelled { return nil }
            var entry = entries[address] ?? Entry(limit: ceiling)
            if entry.active < entry.limit {
                entry.active += 1
                entries[address] = entry
                return waited
            }
            waited = true
            _ = condition.wait(until: Date().addingTimeInterval(0.05))
        }
    }

    /// Returns a permit; a refusal for load halves the server's limit, a success raises it by one.
    func release(_ address: String, refused: Bool) {
        condition.lock()
        guard var entry = entries[address] else {
            condition.unlock()
            return
        }
        entry.active -= 1
        entry.limit = refused ? max(1, entry.limit / 2) : min(ceiling, entry.limit + 1)
        var granted: [@Sendable () -> Void] = []
        while entry.active < entry.limit, !entry.waiters.isEmpty {
            entry.active += 1
            granted.append(entry.waiters.removeFirst().grant)
        }
        if entry.active == 0 && entry.limit == ceiling && entry.waiters.isEmpty {
            entries[address] = nil
        } else {
            entries[address] = entry
        }
        condition.broadcast()
        condition.unlock()
        for grant in granted { grant() }
    }
}
