import Foundation
import Glibc
import XCTest

/// Which threads of this process are blocked waiting for a socket, read from `/proc`: the event a
/// cancel test must see before it cancels. A cancel sent before the probe blocks would end the
/// probe just as fast, and the test would pass without proving that a blocked handshake is
/// interrupted.
enum ThreadsWaitingOnIO {
    /// `read`, `poll`, `recvfrom`, `epoll_wait`, `ppoll`, `epoll_pwait`: what a thread waiting for
    /// a server's bytes sleeps in.
    #if arch(x86_64)
    static let waitingCalls: Set<Int> = [0, 7, 45, 232, 271, 281]
    #elseif arch(arm64)
    static let waitingCalls: Set<Int> = [63, 73, 207, 22]
    #endif

    /// Whether thread `tid` of this process is asleep in one of `waitingCalls`.
    static func isWaiting(_ tid: pid_t) -> Bool {
        guard let state = try? String(contentsOfFile: "/proc/self/task/\(tid)/stat", encoding: .utf8),
              let close = state.lastIndex(of: ")"), state[state.index(close, offsetBy: 2)] == "S",
              let call = try? String(contentsOfFile: "/proc/self/task/\(tid)/syscall", encoding: .utf8),
              let number = call.split(separator: " ").first.flatMap({ Int($0) }) else { return false }
        return waitingCalls.contains(number)
    }

    /// The calling thread's id (`/proc/thread-self` names it).
    static func currentThread() throws -> pid_t {
        let link = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")
        guard let tid = link.split(separator: "/").last.flatMap({ pid_t($0) }) else { throw CocoaError(.fileReadCorruptFile) }
        return tid
    }

    /// The threads whose name starts with `prefix` (`fleettrust-ssh`: the probe threads).
    static func threads(named prefix: String) -> [pid_t] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { task -> pid_t? in
            let name = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
            return name?.hasPrefix(prefix) == true ? pid_t(task) : nil
        }
    }

    /// Waits until `condition` holds, or fails the test once `timeout` has passed.
    @discardableResult
    static func waitUntil(_ what: String, timeout: Duration = .seconds(20), file: StaticString = #filePath, line: UInt = #line,
                          _ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else {
                XCTFail("timed out after \(timeout) waiting until \(what)", file: file, line: line)
                return false
            }
            usleep(2_000)
        }
        return true
    }

    /// `waitUntil` for async tests: polls without holding a thread of the cooperative pool.
    @discardableResult
    static func waitUntil(_ what: String, timeout: Duration = .seconds(20), file: StaticString = #filePath, line: UInt = #line,
                          _ condition: () async -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !(await condition()) {
            guard ContinuousClock.now < deadline else {
                XCTFail("timed out after \(timeout) waiting until \(what)", file: file, line: line)
                return false
            }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return true
    }
}
