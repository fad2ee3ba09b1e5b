import FleetTrustCore
import Glibc
import Synchronization

/// Lets another thread stop one host's probe, even while it is blocked inside libssh, and see
/// what the probe is waiting on (its stage, for progress lines).
///
/// libssh offers no thread-safe way to abort `ssh_connect`; shutting down its socket does wake it
/// at once. A probe may have several connections open at once (one per key type); each registers
/// its socket while it is open and unregisters it (under the same lock) before closing it, so a
/// cancel can never shut down a descriptor number that was closed and reused by someone else.
public final class ProbeCancellation: Sendable {
    private struct State {
        var cancelled = false
        var sockets: [Int32] = []
        var stage: ProbeStage?
        /// Backing off after the server refused a connection for load (MaxStartups).
        var backingOff = false
        /// Called once on cancel: the event-driven engine's attempts still running, by id.
        var handlers: [Int: @Sendable () -> Void] = [:]
        var nextHandler = 0
    }

    private let state = Mutex(State())

    public init() {}

    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// What the probe is doing now, in words (`connect`, `key-exchange`, `backing off`); nil
    /// before it started.
    public var activity: String? {
        state.withLock { state in state.backingOff ? "backing off" : state.stage?.rawValue }
    }

    /// The probe entered `stage`.
    func enter(_ stage: ProbeStage) {
        state.withLock { state in
            state.stage = stage
            state.backingOff = false
        }
    }

    /// The probe waits before retrying a connection the server refused for load.
    func enterBackOff() {
        state.withLock { $0.backingOff = true }
    }

    /// Marks the probe cancelled and wakes whatever it is blocked on.
    public func cancel() {
        let handlers = state.withLock { state in
            state.cancelled = true
            for fd in state.sockets { _ = shutdown(fd, Int32(SHUT_RDWR)) }
            defer { state.handlers = [:] }
            return state.handlers.values
        }
        for handler in handlers { handler() }
    }

    /// Calls `handler` once when the probe is cancelled, unless `forgetHandler` comes first;
    /// returns its id, nil (and nothing recorded) when the probe already is cancelled.
    func onCancel(_ handler: @escaping @Sendable () -> Void) -> Int? {
        state.withLock { state in
            guard !state.cancelled else { return nil }
            state.nextHandler += 1
            state.handlers[state.nextHandler] = handler
            return state.nextHandler
        }
    }

    /// How many attempts a cancel would reach through a handler now.
    var handlersWaiting: Int { state.withLock { $0.handlers.count } }

    /// Drops a handler whose attempt has ended, so a long scan does not keep every attempt alive.
    func forgetHandler(_ id: Int) {
        _ = state.withLock { $0.handlers.removeValue(forKey: id) }
    }

    /// Records a socket in use; returns false (and records nothing) when already cancelled.
    func register(socket fd: Int32) -> Bool {
        state.withLock { state in
            guard !state.cancelled else { return false }
            state.sockets.append(fd)
            return true
        }
    }

    /// Forgets a socket; call before closing it.
    func unregister(socket fd: Int32) {
        state.withLock { state in
            if let index = state.sockets.firstIndex(of: fd) { state.sockets.remove(at: index) }
        }
    }

    /// Sleeps up to `duration`, waking early (and returning false) when cancelled.
    func sleep(_ duration: Duration) -> Bool {
        let end = ContinuousClock.now + duration
        while ContinuousClock.now < end {
            if isCancelled { return false }
            let step = min(end - ContinuousClock.now, .milliseconds(50))
            let (seconds, attoseconds) = step.components
            var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
            _ = nanosleep(&request, nil)
        }
        return !isCancelled
    }
}
