import FleetTrustCore
import Glibc
import Synchronization

/// Lets another thread stop one host's probe, even while it is blocked inside libssh, and see
/// what the probe is waiting on (its stage, for progress lines).
///
/// libssh offers no thread-safe way to abort `ssh_connect`; shutting down its socket does wake it
/// at once. The probe registers the socket it owns while it is open and unregisters it (under the
/// same lock) before closing it, so a cancel can never shut down a descriptor number that was
/// closed and reused by someone else.
public final class ProbeCancellation: Sendable {
    private struct State {
        var cancelled = false
        var socket: Int32?
        var stage: ProbeStage?
        /// Waiting for a handshake slot (connected, identified, not yet exchanging keys).
        var queued = false
    }

    private let state = Mutex(State())

    public init() {}

    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// What the probe is doing now, in words (`connect`, `key-exchange`, `waiting for a slot`);
    /// nil before it started.
    public var activity: String? {
        state.withLock { state in state.queued ? "waiting for a slot" : state.stage?.rawValue }
    }

    /// The probe entered `stage` (or, with `queued`, waits for a handshake slot before it).
    func enter(_ stage: ProbeStage, queued: Bool = false) {
        state.withLock { state in
            state.stage = stage
            state.queued = queued
        }
    }

    /// Marks the probe cancelled and wakes whatever it is blocked on.
    public func cancel() {
        state.withLock { state in
            state.cancelled = true
            if let fd = state.socket { _ = shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    /// Records the socket in use; returns false (and records nothing) when already cancelled.
    func register(socket fd: Int32) -> Bool {
        state.withLock { state in
            guard !state.cancelled else { return false }
            state.socket = fd
            return true
        }
    }

    /// Forgets the socket; call before closing it.
    func unregister() {
        state.withLock { $0.socket = nil }
    }
}
