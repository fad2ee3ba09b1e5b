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
/// raises the limit by one again, up to the ceiling. A timeout of a server known to be there (it
/// answered this scan) halves the endpoint's limit too, and the scan-wide `ConnectionWindow`
/// (the machine itself may be the bottleneck); a timeout beside many other connections is
/// retried, under the lower window (see `BackOff` for how often). Waiting for a permit or backing off does not eat into an attempt's
/// timeout: the timeout starts when the connection really starts.
final class TargetPoliteness: @unchecked Sendable {
    private struct Entry {
        var active = 0
        var limit: Int
        /// Attempts of the event-driven engine waiting for this endpoint, in `waiters`.
        var waiting = 0
    }

    /// An attempt of the event-driven engine waiting for a permit.
    private struct Waiter {
        var address: String
        var ticket: UInt64
        var grant: @Sendable (Permit) -> Void
    }

    /// Leave to open one connection: to which endpoint, and under which scan-wide window.
    struct Permit: Sendable {
        var address: String
        var window: ConnectionWindow.Ticket
    }

    /// What a failed attempt says about load.
    enum LoadSignal: Sendable {
        /// The server shed the connection (`MaxStartups`).
        case refused
        /// The server did not identify itself in time and has not answered any connection of
        /// this scan: loaded, or silent (a tarpit, a wedged daemon), which no retry cures.
        case silent
        /// The server did not finish in time (or, having answered another connection of this
        /// scan, did not even accept or identify itself in time): it is there, and slow.
        case slow
    }

    /// Connections at once to one address, below a stock `sshd`'s `MaxStartups` start of 10.
    let ceiling: Int
    /// Retries after a refusal for load, before the refusal is reported as the host's failure.
    static let retries = 7
    /// Retries, each under a lower window, after a timeout the scan's own load may explain: one
    /// for a server that never answered (a silent one costs one more timeout, not several),
    /// three for one that answered and then was slow.
    static let silentRetries = 1
    static let slowRetries = 3
    static let firstPause: Duration = .milliseconds(200)

    private let condition = NSCondition()
    private var entries: [String: Entry] = [:]
    /// Every waiting attempt of the event-driven engine, oldest first.
    private var waiters: [Waiter] = []
    private var window: ConnectionWindow
    /// Endpoints that have answered a connection of this scan (identified themselves).
    private var answered: Set<String> = []

    init(ceiling: Int = 8, windowFloor: Int = 16) {
        self.ceiling = max(1, ceiling)
        self.window = ConnectionWindow(floor: windowFloor)
    }

    /// Whether a failure is a server shedding load, which a later attempt may well get past:
    /// closed before its identification, or (OpenSSH 9.2's sshd) after writing only
    /// `Exceeded MaxStartups`.
    static func isRefusalForLoad(_ failure: ProbeFailure) -> Bool {
        guard failure.stage == .banner else { return false }
        return failure.code == .connectionClosed
            || failure.code == .notSSH && failure.message.description.contains("\"Exceeded MaxStartups\"")
    }

    /// What a failure says about load: a refusal, a timeout, or nothing.
    static func loadSignal(_ failure: ProbeFailure) -> LoadSignal? {
        if isRefusalForLoad(failure) { return .refused }
        switch failure.code {
        // A connection that never completed may be the load's too (a listen queue that
        // overflowed in a burst, a loop that ran late): measured on the loopback bench, 8 of 208
        // reachable endpoints were lost so. It gets the one retry of a silent server.
        case .bannerTimeout, .connectTimeout: return .silent
        case .kexTimeout: return .slow
        default: return nil
        }
    }

    /// Runs `attempt` (which opens one connection to `endpoint`) within the endpoint's limit and
    /// the scan's window; retries it, after a pause, while load explains its failure. Any
    /// protocol's attempt goes through here (`PoliteAttempt` says what it tells of load).
    /// `attempt` is told whether it is a fresh start (a retry, or one that waited for a permit),
    /// whose timeout must count from now.
    func run<Attempt: PoliteAttempt>(_ endpoint: ProbeEndpoint, port: Int, cancellation: ProbeCancellation,
                                     _ attempt: (_ fresh: Bool) -> Attempt) -> Attempt {
        guard let numeric = endpoint.peerAddress else { return attempt(false) }
        let address = Self.key(numeric, port: port)
        var backOff = BackOff()
        while true {
            guard let (permit, waited) = acquire(address, cancellation: cancellation) else { return .cancelled }
            let outcome = attempt(waited || backOff.retried)
            guard let pause = release(permit, after: outcome.load, backOff: &backOff), !cancellation.isCancelled else { return outcome }
            cancellation.enterBackOff()
            guard cancellation.sleep(pause) else { return .cancelled }
        }
    }

    /// The pauses before retrying a connection that load explains: `firstPause`, then doubling,
    /// each ±50 %; `retries` after refusals, `silentRetries` and `slowRetries` after
    /// timeouts. Shared by the
    /// thread-bound and the event-driven attempts.
    struct BackOff {
        private var refusals = 0
        private var silences = 0
        private var slowOnes = 0
        private var pause = TargetPoliteness.firstPause

        /// Whether a retry has been taken (its timeout then counts from its own start).
        var retried: Bool { refusals + silences + slowOnes > 0 }

        /// The next pause after `signal`, nil when its retries are spent.
        mutating func next(after signal: LoadSignal) -> Duration? {
            switch signal {
            case .refused:
                guard refusals < TargetPoliteness.retries else { return nil }
                refusals += 1
            case .silent:
                guard silences < TargetPoliteness.silentRetries else { return nil }
                silences += 1
            case .slow:
                guard slowOnes < TargetPoliteness.slowRetries else { return nil }
                slowOnes += 1
            }
            defer { pause = pause * 2 }
            return pause * Double.random(in: 0.5...1.5)
        }
    }

    /// The name permits are counted under: one server is one address and port.
    static func key(_ numeric: String, port: Int) -> String { "[\(numeric)]:\(port)" }

    /// Takes a permit for `address` at once, or queues `granted`, which is called with the
    /// permit, on the thread that freed it, once the endpoint and the window have room (nil).
    /// For callers that cannot block (`ExchangeEngine`); each permit is returned with `release`.
    func acquire(_ address: String, ticket: UInt64 = 0, orWhenFree granted: @escaping @Sendable (Permit) -> Void) -> Permit? {
        condition.lock()
        defer { condition.unlock() }
        var entry = entries[address] ?? Entry(limit: ceiling)
        if entry.active < entry.limit && entry.waiting == 0 && window.hasRoom {
            entry.active += 1
            entries[address] = entry
            return Permit(address: address, window: window.open())
        }
        entry.waiting += 1
        entries[address] = entry
        waiters.append(Waiter(address: address, ticket: ticket, grant: granted))
        return nil
    }

    /// Takes back a queued request (a cancelled attempt); false when its grant is already on
    /// its way, which the attempt must then return.
    func withdraw(_ address: String, ticket: UInt64) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard let index = waiters.firstIndex(where: { $0.address == address && $0.ticket == ticket }),
              var entry = entries[address] else { return false }
        waiters.remove(at: index)
        entry.waiting -= 1
        entries[address] = isIdle(entry) ? nil : entry
        return true
    }

    /// Takes a permit; whether it had to wait for one, nil when cancelled meanwhile.
    private func acquire(_ address: String, cancellation: ProbeCancellation) -> (Permit, Bool)? {
        condition.lock()
        defer { condition.unlock() }
        var waited = false
        while true {
            if cancellation.isCancelled { return nil }
            var entry = entries[address] ?? Entry(limit: ceiling)
            if entry.active < entry.limit && window.hasRoom {
                entry.active += 1
                entries[address] = entry
                return (Permit(address: address, window: window.open()), waited)
            }
            waited = true
            _ = condition.wait(until: Date().addingTimeInterval(0.05))
        }
    }

    /// Returns a permit after its attempt's `outcome`: a refusal or a timeout halves the
    /// endpoint's limit, a success raises it by one, and the window learns the same. Returns
    /// the pause before retrying the attempt, nil when its outcome is to be reported.
    func release(_ permit: Permit, after outcome: AttemptOutcome, backOff: inout BackOff) -> Duration? {
        release(permit, after: outcome.load, backOff: &backOff)
    }

    /// The same, for what an attempt's outcome says of load (`AttemptOutcome.load(decides:)`).
    func release(_ permit: Permit, after load: AttemptLoad, backOff: inout BackOff) -> Duration? {
        let (signal, besideMany) = release(permit, load: load)
        // Only a refusal or a slow server is evidence of load; a silent one gets its one retry
        // (it may have been the load's first victim) without lowering anyone's limits, or a
        // subnet of tarpits would throttle the whole scan.
        guard let signal, signal == .refused || besideMany else { return nil }
        return backOff.next(after: signal)
    }

    /// Whether the connection under `permit` runs beside more than the window's floor of others
    /// (a timeout of it may then be the scan's own load).
    func runsBesideMany(_ permit: Permit) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return window.ranBesideMany(permit.window)
    }

    /// Returns a permit whose attempt was cancelled or never started.
    func release(_ permit: Permit) {
        _ = release(permit, load: nil)
    }

    /// Returns a permit under one hold of the lock, with what its attempt's `load` (nil: none ran)
    /// signals; answers that signal and whether the connection ran beside more than the window's
    /// floor of others.
    private func release(_ permit: Permit, load: AttemptLoad?) -> (LoadSignal?, Bool) {
        var signal = load.flatMap { $0.noRetryCures ? nil : $0.failure.flatMap(Self.loadSignal) }
        condition.lock()
        // A server that answered this scan before (or now) and now does not even take the
        // connection in time (its listen queue overflowed) or identify itself is loaded, not gone.
        if load?.answered == true { answered.insert(permit.address) }
        if signal == .silent && answered.contains(permit.address) { signal = .slow }
        let congested = signal == .refused || signal == .slow
        let besideMany = window.ranBesideMany(permit.window)
        window.close(permit.window, succeeded: load?.succeeded == true, timedOut: signal == .slow)
        if var entry = entries[permit.address] {
            entry.active -= 1
            entry.limit = congested ? max(1, entry.limit / 2) : min(ceiling, entry.limit + 1)
            entries[permit.address] = isIdle(entry) ? nil : entry
        }
        var granted: [(@Sendable (Permit) -> Void, Permit)] = []
        var index = 0
        while index < waiters.count && window.hasRoom {
            let waiter = waiters[index]
            guard var entry = entries[waiter.address], entry.active < entry.limit else {
                index += 1
                continue
            }
            entry.active += 1
            entry.waiting -= 1
            entries[waiter.address] = entry
            waiters.remove(at: index)
            granted.append((waiter.grant, Permit(address: waiter.address, window: window.open())))
        }
        condition.broadcast()
        condition.unlock()
        for (grant, permit) in granted { grant(permit) }
        return (signal, besideMany)
    }

    /// An endpoint with nothing in flight, nothing waiting and its full limit needs no entry.
    private func isIdle(_ entry: Entry) -> Bool {
        entry.active == 0 && entry.waiting == 0 && entry.limit == ceiling
    }
}

/// What one connection attempt of any protocol tells `TargetPoliteness` about the server's load.
struct AttemptLoad: Sendable {
    /// Why the attempt failed; nil when it did not.
    var failure: ProbeFailure?
    /// The server spoke (identified itself, answered the handshake).
    var answered: Bool
    /// The attempt proved what it came for.
    var succeeded: Bool
    /// The failure is one no retry cures, whatever its code says of load.
    var noRetryCures = false
}

/// An attempt's outcome, as `TargetPoliteness` runs it for any protocol: what it says of load,
/// and the outcome of an attempt cancelled before it could start.
protocol PoliteAttempt {
    var load: AttemptLoad { get }
    static var cancelled: Self { get }
}

extension AttemptOutcome: PoliteAttempt {
    var load: AttemptLoad { load(decides: false) }

    /// What the outcome says of load; for the connection that decides which key `ssh` meets
    /// (`decides`), a timeout is cured by no retry: a new connection is one a relay could send
    /// elsewhere (it held the first past our timeout, where `ssh`, without a timeout of its own,
    /// waits and meets the machine it is sent to). That connection waits longer instead.
    func load(decides: Bool) -> AttemptLoad {
        // An exchange that timed out waiting for a KEXINIT the server never sent met a server that
        // speaks only after the client's (its own KEXINIT follows its identification at once
        // otherwise): the probe's offers sent up front reach it, a retry would not.
        let timedOut = switch failure?.code {
        case .connectTimeout?, .bannerTimeout?, .kexTimeout?: true
        default: false
        }
        return AttemptLoad(failure: failure, answered: serverVersion != nil || key != nil, succeeded: key != nil,
                           noRetryCures: failure?.code == .kexTimeout && (serverHostKeyAlgorithms ?? []).isEmpty
                               || decides && timedOut)
    }

    static var cancelled: AttemptOutcome { AttemptOutcome(failure: ProbeFailures.cancelled) }
}
