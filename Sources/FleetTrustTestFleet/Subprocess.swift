import Foundation

/// Runs a tool to completion and returns what it printed; for test and demo set-up only.
public struct ToolOutput: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
}

public enum Tool {
    @discardableResult
    public static func run(_ path: String, _ arguments: [String], input: String? = nil,
                           environment: [String: String]? = nil) throws -> ToolOutput {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let inPipe = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : inPipe
        try process.run()
        if let input {
            inPipe.fileHandleForWriting.write(Data(input.utf8))
            try? inPipe.fileHandleForWriting.close()
        }
        let group = DispatchGroup()
        nonisolated(unsafe) var errData = Data()
        group.enter()
        DispatchQueue.global().async {
            errData = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return ToolOutput(status: process.terminationStatus,
                          stdout: String(decoding: outData, as: UTF8.self),
                          stderr: String(decoding: errData, as: UTF8.self))
    }

    /// Runs a tool and throws with its stderr when it fails.
    @discardableResult
    public static func check(_ path: String, _ arguments: [String]) throws -> String {
        let output = try run(path, arguments)
        guard output.status == 0 else {
            throw TestFleetError.toolFailed("\(path) \(arguments.joined(separator: " ")): \(output.stderr)")
        }
        return output.stdout
    }
}

public enum TestFleetError: Error, CustomStringConvertible {
    case toolFailed(String)
    case sshdDidNotStart(String)
    case noFreePort

    public var description: String {
        switch self {
        case .toolFailed(let s): return "tool failed: \(s)"
        case .sshdDidNotStart(let s): return "sshd did not start: \(s)"
        case .noFreePort: return "no free port on 127.0.0.1"
        }
    }
}
