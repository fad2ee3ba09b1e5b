import Foundation

/// Keeps our connections that wait for one control master to accept them below the master's
/// listen backlog, so that none of them has to retry its `connect`.
///
/// A scan asks one master for hundreds of channels at once. `ssh` listens on its control socket
/// with a backlog of 64 and accepts one connection per turn of its loop; past the backlog a
/// `connect` fails with EAGAIN (a Unix socket cannot be waited on for that), and hundreds of
/// probe threads retrying it every millisecond spent the CPU the master and the bastion needed
/// (65,000 `connect`s for 300 channels in one scan, measured). Instead each connection takes a
/// place here before it connects and gives it back as soon as the master has greeted it (accepted
/// it) or it failed; the others sleep until a place is free. Only the wait for the accept is
/// bounded: a channel the bastion is still opening holds no place, so a slow network behind the
/// bastion still has as many channels in flight as the scan has probes.
final class ChannelAdmission: @unchecked Sendable {
    /// Connections waiting for the accept at once: half of ssh's backlog, leaving the rest to
    /// the user's own clients of the same master.
    static let places = 32

    private let condition = NSCondition()
    private var taken = 0
    let capacity: Int

    init(capacity: Int = ChannelAdmission.places) {
        self.capacity = max(1, capacity)
    }

    /// Takes a place, waiting for one until `deadline`; false when the deadline passed or the
    /// probe was cancelled first (looked at every tenth of a second).
    func enter(deadline: ContinuousClock.Instant, cancellation: ProbeCancellation) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while taken >= capacity {
            if cancellation.isCancelled { return false }
            let left = deadline - .now
            guard left > .zero else { return false }
            _ = condition.wait(until: Date(timeIntervalSinceNow: min(left.seconds, 0.1)))
        }
        taken += 1
        return true
    }

    /// Gives a place back, once per successful `enter`.
    func leave() {
        condition.lock()
        taken -= 1
        condition.signal()
        condition.unlock()
    }
}
