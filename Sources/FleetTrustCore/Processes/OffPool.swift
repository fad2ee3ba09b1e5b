import Foundation

/// Runs blocking work (SQLite calls, which wait on locks) on a thread of its own, never on
/// Swift's cooperative pool.
public enum OffPool {
    public static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                do { continuation.resume(returning: try work()) } catch { continuation.resume(throwing: error) }
            }
            thread.name = "fleettrust-history"
            thread.start()
        }
    }
}
