import Foundation

/// A blocking call that cannot be interrupted (`getaddrinfo`), run on a short-lived thread of its
/// own so it never holds Swift's cooperative pool, and waited for only until a deadline or a
/// cancellation: past either the caller goes on, and the thread finishes and drops its answer later.
enum DetachedCall {
    private final class Slot<T>: @unchecked Sendable {
        let done = DispatchSemaphore(value: 0)
        let lock = NSLock()
        var value: T?
    }

    /// `body`'s answer, or nil when `deadline` passed or `isCancelled` said so first (checked
    /// every 50 ms).
    static func run<T: Sendable>(until deadline: ContinuousClock.Instant, isCancelled: () -> Bool = { false },
                                 _ body: @escaping @Sendable () -> T) -> T? {
        let slot = Slot<T>()
        Thread.detachNewThread {
            let value = body()
            slot.lock.withLock { slot.value = value }
            slot.done.signal()
        }
        while ContinuousClock.now < deadline, !isCancelled() {
            let slice = min(deadline - ContinuousClock.now, .milliseconds(50))
            if slot.done.wait(timeout: .now() + slice.seconds) == .success {
                return slot.lock.withLock { slot.value }
            }
        }
        return nil
    }
}
