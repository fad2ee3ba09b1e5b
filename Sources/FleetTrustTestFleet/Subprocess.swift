import Foundation
import Subprocess
#if canImport(System)
import System
#else
import SystemPackage
#endif

/// What a tool printed and how it ended; for test and demo set-up only.
public struct ToolOutput: Sendable {
    /// The exit code, or the signal number when a signal ended it (as Foundation's `Process` reported).
    public var status: Int32
    public var stdout: String
    public var stderr: String
}

/// Runs set-up tools (`ssh-keygen`, `ssh`, `openssl`, `mount`) to completion through swift-subprocess.
///
/// Output is collected whole (up to `outputLimit` bytes per stream, beyond which the run throws);
/// there is no time limit: these tools end on their own, and a test that needs a bound uses
/// `ProgramRun`. Standard input is `/dev/null` unless `input` is given.
///
/// Two entry points, one for each kind of caller:
/// - `async` (`try await Tool.run(…)`): for `async` test methods, which run on Swift's cooperative
///   pool and must not block one of its threads. In an `async` context the compiler picks this one.
/// - synchronous: for XCTest's synchronous test methods, `setUp`/`tearDown`, `TestFleet` and the
///   `testfleet` command. It runs the `async` call in a detached task and waits on a semaphore, so it
///   blocks the calling thread until the tool ends. Call it only from a thread of your own (XCTest's
///   main thread, a dedicated or Dispatch thread), never from a cooperative-pool thread: the detached
///   task needs a free pool thread to finish, and a pool whose threads all wait here deadlocks (the
///   pool is as wide as the machine has cores, two here). Set-up that synchronous code shares with
///   `async` tests (a lazily made `TestFleet`) is therefore forced from `class func setUp()`.
public enum Tool {
    /// The most either stream may print before the run throws.
    public static let outputLimit = 64 << 20

    @discardableResult
    public static func run(_ path: String, _ arguments: [String], input: String? = nil,
                           environment: [String: String]? = nil) async throws -> ToolOutput {
        let configuration = Configuration(executable: .path(FilePath(path)), arguments: Arguments(arguments),
                                          environment: environment.map { vars in
                                              // Each entry goes to strdup(): it must end in NUL.
                                              .custom(vars.map { Array("\($0.key)=\($0.value)\0".utf8) })
                                          } ?? .inherit)
        if let input {
            return try await collect(configuration, input: .array(Array(input.utf8)))
        }
        return try await collect(configuration, input: .none)
    }

    /// The synchronous bridge; see the type's documentation for the threads it may be called from.
    @discardableResult
    public static func run(_ path: String, _ arguments: [String], input: String? = nil,
                           environment: [String: String]? = nil) throws -> ToolOutput {
        let outcome = Outcome()
        Task.detached {
            do {
                outcome.finish(.success(try await run(path, arguments, input: input, environment: environment)))
            } catch {
                outcome.finish(.failure(error))
            }
        }
        return try outcome.wait()
    }

    /// Runs a tool and throws with its stderr when it fails.
    @discardableResult
    public static func check(_ path: String, _ arguments: [String]) async throws -> String {
        try checked(path, arguments, try await run(path, arguments))
    }

    /// Runs a tool and throws with its stderr when it fails; the synchronous bridge (see the type).
    @discardableResult
    public static func check(_ path: String, _ arguments: [String]) throws -> String {
        try checked(path, arguments, try run(path, arguments))
    }

    private static func checked(_ path: String, _ arguments: [String], _ output: ToolOutput) throws -> String {
        guard output.status == 0 else {
            throw TestFleetError.toolFailed("\(path) \(arguments.joined(separator: " ")): \(output.stderr)")
        }
        return output.stdout
    }

    private static func collect<Input: InputProtocol>(_ configuration: Configuration,
                                                      input: Input) async throws -> ToolOutput {
        let result = try await Subprocess.run(configuration, input: input,
                                              output: .bytes(limit: outputLimit), error: .bytes(limit: outputLimit))
        let status: Int32
        switch result.terminationStatus {
        case .exited(let code): status = code
        case .signaled(let signal): status = signal
        }
        return ToolOutput(status: status,
                          stdout: String(decoding: result.standardOutput, as: UTF8.self),
                          stderr: String(decoding: result.standardError, as: UTF8.self))
    }

    /// Hands the detached task's result to the thread waiting in the synchronous `run`.
    private final class Outcome: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var result: Result<ToolOutput, any Error>?

        func finish(_ result: Result<ToolOutput, any Error>) {
            self.result = result
            done.signal()
        }

        func wait() throws -> ToolOutput {
            done.wait()
            return try result!.get()
        }
    }
}

public enum TestFleetError: Error, CustomStringConvertible {
    case toolFailed(String)
    case sshdDidNotStart(String)
    case noFreePort
    /// Another process's server listens on a port chosen for ours.
    case portTaken(String)

    public var description: String {
        switch self {
        case .toolFailed(let s): return "tool failed: \(s)"
        case .sshdDidNotStart(let s): return "sshd did not start: \(s)"
        case .noFreePort: return "no free port on 127.0.0.1"
        case .portTaken(let s): return "another process's server took the port chosen for ours: \(s)"
        }
    }
}
