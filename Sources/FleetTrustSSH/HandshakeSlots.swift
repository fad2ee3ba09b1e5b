import Foundation

/// Bounds how many key exchanges run at once, apart from how many hosts are merely being waited on.
///
/// Waiting for a TCP connection and for a server's first bytes costs nothing but a blocked
/// thread, while a key exchange costs CPU here and at the server. A probe takes a slot only once
/// its server has spoken, so hosts that never answer hold a waiting thread for their timeout and
/// never a slot: they do not slow the hosts that do answer.
final class HandshakeSlots: @unchecked Sendable {
    private let condition = NSCondition()
    private var free: Int

    init(_ count: Int) {
        free = max(1, count)
    }

    /// Takes a slot; false when the probe was cancelled while it waited.
    func acquire(cancellation: ProbeCancellation) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while free == 0 {
            if cancellation.isCancelled { return false }
            _ = condition.wait(until: Date().addingTimeInterval(0.05))
        }
        free -= 1
        return true
    }

    func release() {
        condition.lock()
        free += 1
        condition.signal()
        condition.unlock()
    }

    /// Runs `body` holding a slot; the exchange's deadline starts once the slot is held.
    func withSlot<T>(cancellation: ProbeCancellation, cancelled: () -> T, _ body: () -> T) -> T {
        cancellation.enter(.keyExchange, queued: true)
        guard acquire(cancellation: cancellation) else { return cancelled() }
        defer { release() }
        cancellation.enter(.keyExchange)
        return body()
    }
}
