import Foundation

/// Runs blocking work on a thread of its own, never on Swift's cooperative pool: SQLite calls,
/// which wait on locks, and reading an inventory, which may run `Match exec` commands and wait for
/// canonical-name look-ups.
public enum OffPool {
    public static func run<T: Sendable>(named name: String = "fleettrust-history", _ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                do { continuation.resume(returning: try work()) } catch { continuation.resume(throwing: error) }
            }
            thread.name = name
            thread.start()
        }
    }
}
