import Foundation
import Synchronization

/// Records sightings on a thread of its own, so the dashboard's UI thread and Swift's cooperative
/// pool never wait for SQLite (another fleettrust may hold the write lock for a while): `submit`
/// only queues; the thread writes whatever has queued in one transaction.
public final class HistoryRecorder: Sendable {
    private struct Queue {
        var pending: [HistorySighting] = []
        var finishing = false
        var lastError: String?
        var unreported: String?
    }

    private let store: HistoryStore
    private let queue = Mutex(Queue())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    public init(store: HistoryStore) {
        self.store = store
        let thread = Thread { [self] in run() }
        thread.name = "fleettrust-history"
        thread.start()
    }

    public func submit(_ sighting: HistorySighting) {
        queue.withLock { $0.pending.append(sighting) }
        wake.signal()
    }

    /// Why the latest batch could not be written, once: one sentence naming the file, not
    /// repeated while the next batches fail the same way.
    public func takeError() -> String? {
        queue.withLock { queue in
            defer { queue.unreported = nil }
            return queue.unreported
        }
    }

    /// Writes what is queued and stops; waits at most `seconds`. Returns whether all was written.
    @discardableResult
    public func finish(waiting seconds: Double) -> Bool {
        queue.withLock { $0.finishing = true }
        wake.signal()
        return finished.wait(timeout: .now() + seconds) == .success
    }

    private func run() {
        while true {
            wake.wait()
            let (batch, finishing) = queue.withLock { queue in
                defer { queue.pending.removeAll() }
                return (queue.pending, queue.finishing)
            }
            if !batch.isEmpty {
                do {
                    try store.record(batch)
                } catch {
                    let sentence = "\(error)"
                    queue.withLock { queue in
                        if queue.lastError != sentence { queue.unreported = sentence }
                        queue.lastError = sentence
                    }
                }
            }
            if finishing && queue.withLock({ $0.pending.isEmpty }) {
                finished.signal()
                return
            }
        }
    }
}
