import Foundation
import Subprocess
#if canImport(System)
import System
#else
import SystemPackage
#endif

/// A dynamic inventory: an executable that prints its inventory as JSON when run with `--list`
/// (and one host's variables for `--host NAME`), run as Ansible's script inventory plugin runs it.
///
/// A script is somebody else's program: it runs in its own process group, with standard input
/// from `/dev/null`, for at most `limits.seconds`, and its output is cut off at
/// `limits.outputBytes`; either bound stops the whole process group (SIGTERM, then SIGKILL).
public struct InventoryScript: Sendable {
    public struct Limits: Sendable {
        public var seconds: Double
        public var outputBytes: Int
        /// How much of its standard error is kept to show when it fails.
        public var errorBytes: Int

        public init(seconds: Double = 60, outputBytes: Int = 64 << 20, errorBytes: Int = 64 << 10) {
            self.seconds = seconds
            self.outputBytes = outputBytes
            self.errorBytes = errorBytes
        }
    }

    public var path: String
    public var limits: Limits

    public init(path: String, limits: Limits = Limits()) {
        self.path = path
        self.limits = limits
    }

    private enum Outcome: Sendable {
        case finished(TerminationStatus, output: [UInt8], errorOutput: [UInt8])
        case timedOut
    }

    private struct OutputTooLarge: Error {}

    /// Runs the script with `arguments` and returns what it printed on standard output, or throws
    /// why it gave nothing usable.
    public func run(_ arguments: [String]) async throws(InventoryLoadError) -> [UInt8] {
        let outcome: Outcome
        do {
            outcome = try await withThrowingTaskGroup(of: Outcome.self) { group in
                group.addTask { try await execute(arguments) }
                group.addTask {
                    try await Task.sleep(for: .milliseconds(Int(limits.seconds * 1000)))
                    return .timedOut
                }
                let first = try await group.next()!
                group.cancelAll()
                return first
            }
        } catch is OutputTooLarge {
            throw .scriptOutputTooLarge(path: path, arguments: arguments, limit: limits.outputBytes)
        } catch let error as SubprocessError {
            throw .scriptNotStarted(path: path, reason: Self.reason(error))
        } catch {
            throw .scriptNotStarted(path: path, reason: "\(error)")
        }
        switch outcome {
        case .timedOut:
            throw .scriptTimedOut(path: path, arguments: arguments, seconds: limits.seconds)
        case .finished(.exited(0), let output, _):
            return output
        case .finished(.exited(let status), _, let errorOutput):
            throw .scriptFailed(path: path, arguments: arguments, status: status,
                                errorOutput: String(decoding: errorOutput, as: UTF8.self))
        case .finished(.signaled(let signal), _, let errorOutput):
            throw .scriptKilled(path: path, arguments: arguments, signal: signal,
                                errorOutput: String(decoding: errorOutput, as: UTF8.self))
        }
    }

    private func execute(_ arguments: [String]) async throws -> Outcome {
        var platform = PlatformOptions()
        platform.processGroupID = 0
        platform.teardownSequence = [.send(signal: .terminate, toProcessGroup: true, allowedDurationToNextStep: .milliseconds(500))]
        let limits = limits
        let result = try await Subprocess.run(.path(FilePath(path)), arguments: Arguments(arguments),
                                              platformOptions: platform, input: .none,
                                              output: .sequence, error: .sequence) { execution in
            try await withThrowingTaskGroup(of: (Bool, [UInt8]).self) { streams in
                streams.addTask {
                    var output: [UInt8] = []
                    for try await buffer in execution.standardOutput {
                        guard output.count + buffer.count <= limits.outputBytes else { throw OutputTooLarge() }
                        buffer.withUnsafeBytes { output.append(contentsOf: $0) }
                    }
                    return (true, output)
                }
                streams.addTask {
                    var errorOutput: [UInt8] = []
                    for try await buffer in execution.standardError where errorOutput.count < limits.errorBytes {
                        buffer.withUnsafeBytes { errorOutput.append(contentsOf: $0.prefix(limits.errorBytes - errorOutput.count)) }
                    }
                    return (false, errorOutput)
                }
                var output: [UInt8] = []
                var errorOutput: [UInt8] = []
                for try await (isOutput, bytes) in streams {
                    if isOutput { output = bytes } else { errorOutput = bytes }
                }
                return (output, errorOutput)
            }
        }
        let (output, errorOutput) = result.closureResult
        return .finished(result.terminationStatus, output: output, errorOutput: errorOutput)
    }

    private static func reason(_ error: SubprocessError) -> String {
        if let underlying = error.underlyingError { return String(cString: strerror(underlying.rawValue)) }
        return "\(error)"
    }
}
