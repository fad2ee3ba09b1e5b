import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a program to completion with `posix_spawn` and reports what it printed and how much
/// memory it used at most, as `wait4` measures it; for end-to-end tests of our own binaries.
///
/// Kept hand-written rather than moved to swift-subprocess: the peak memory comes from `wait4`'s
/// `rusage`, and memory bounds are what several end-to-end tests assert. swift-subprocess 1.0.2
/// exposes the child's PID (`Execution.processIdentifier`) but reaps it itself, with `waitid`, which
/// returns no `rusage`, and its result carries the termination status only. Reading the zombie's
/// usage first would take the raw `waitid` system call with `WNOWAIT` and a `rusage` argument (glibc's
/// wrapper has none) and rely on the library reaping only after the body closure returns, which it
/// does not promise.
public struct ProgramRun: Sendable {
    public var status: Int32
    public var stdout: [UInt8]
    public var stderr: [UInt8]
    /// Peak resident memory in kilobytes.
    public var maxResidentKilobytes: Int
    public var seconds: Double

    public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    public var stderrText: String { String(decoding: stderr, as: UTF8.self) }

    /// Runs `path` with `arguments`; kills it (by PID) if it outlives `limit` seconds. Unless
    /// `environment` names one, the program gets a scratch `XDG_STATE_HOME` (its history and
    /// audit log), removed afterwards, so runs never share a history by accident.
    public static func run(_ path: String, _ arguments: [String], limit: Double = 120,
                           environment: [String: String]? = nil) throws -> ProgramRun {
        let dir = FileManager.default.temporaryDirectory.path
        let tag = "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let outPath = "\(dir)/ft-run-\(tag).out", errPath = "\(dir)/ft-run-\(tag).err"
        let statePath = "\(dir)/ft-run-\(tag).state"
        defer {
            unlink(outPath)
            unlink(errPath)
            try? FileManager.default.removeItem(atPath: statePath)
        }
        var environment = environment ?? ProcessInfo.processInfo.environment
        if environment["XDG_STATE_HOME"] == nil { environment["XDG_STATE_HOME"] = statePath }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let env = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { env.forEach { free($0) } }
        var pid: pid_t = 0
        let start = Date()
        let rc = posix_spawn(&pid, path, &actions, nil, argv, env)
        guard rc == 0 else { throw TestFleetError.toolFailed("posix_spawn \(path): \(String(cString: strerror(rc)))") }
        var status: Int32 = 0
        var usage = rusage()
        while true {
            let r = wait4(pid, &status, WNOHANG, &usage)
            if r == pid { break }
            if Date().timeIntervalSince(start) > limit {
                kill(pid, SIGKILL)
                _ = wait4(pid, &status, 0, &usage)
                break
            }
            usleep(2_000)
        }
        let seconds = Date().timeIntervalSince(start)
        let exitCode: Int32 = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return ProgramRun(status: exitCode,
                          stdout: [UInt8](FileManager.default.contents(atPath: outPath) ?? Data()),
                          stderr: [UInt8](FileManager.default.contents(atPath: errPath) ?? Data()),
                          maxResidentKilobytes: Int(usage.ru_maxrss), seconds: seconds)
    }
}

/// Where the package's built executables are, for end-to-end tests.
public enum BuiltProducts {
    /// The directory holding the test bundle, which is also where SwiftPM puts executables.
    public static var directory: String {
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return (bundle.bundlePath as NSString).deletingLastPathComponent
        }
        return (CommandLine.arguments[0] as NSString).deletingLastPathComponent
    }

    public static var fleettrust: String { directory + "/fleettrust" }
    public static var testfleet: String { directory + "/testfleet" }
}
