import Foundation
import XCTest
import FleetTrustTestFleet

/// A real terminal for the dashboard: a tmux server of its own (own socket), one session running
/// the command under `sh`, which prints the exit status and the terminal modes afterwards so a
/// test can see that the terminal was restored. Every process is stopped by PID in `stop()`.
final class DashboardTmux {
    let socket = "fleettrust-test-\(getpid())-\(UUID().uuidString.prefix(8))"
    let session = "dash"
    private(set) var shellPID: pid_t = 0
    /// The scratch `XDG_STATE_HOME` made for the dashboard, removed in `stop()`.
    private var stateDirectory: String?

    static let exitMarker = "FLEETTRUST-EXIT="

    /// The built `fleettrust`, next to the test bundle in the build directory.
    static var executable: String { built("fleettrust") }

    /// A program of this package (`fleettrust`, `testfleet`), next to the test bundle in the build directory.
    static func built(_ name: String) -> String {
        let bundleDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for directory in [bundleDirectory, bundleDirectory.deletingLastPathComponent()] {
            let candidate = directory.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name).path
    }

    /// The dashboard with `arguments`; afterwards the shell prints its exit status and terminal modes.
    convenience init(arguments: [String], width: Int = 160, height: Int = 45, environment: [String: String] = [:],
                     executable: String = DashboardTmux.executable) throws {
        let command = ([executable] + arguments).map(DashboardTmux.quote).joined(separator: " ")
        // The history (and default audit log) of a test's dashboard stay in a directory of its own.
        let state = NSTemporaryDirectory() + "ft-tmux-state-\(getpid())-\(UUID().uuidString.prefix(8))"
        var environment = environment
        if environment["XDG_STATE_HOME"] == nil { environment["XDG_STATE_HOME"] = state }
        let script = "trap : INT; env -u NO_COLOR \(DashboardTmux.environment(environment)) \(command); echo \(DashboardTmux.exitMarker)$?; stty -a | tr ' ;' '\\n\\n' | grep -x -e icanon -e echo -e -icanon -e -echo | tr '\\n' ' '; echo; exec sleep 600"
        try self.init(script: script, width: width, height: height)
        stateDirectory = state
    }

    /// A session running `script` under `sh`, as it is (it may end the session itself).
    init(script: String, width: Int = 160, height: Int = 45) throws {
        try tmux(["new-session", "-d", "-s", session, "-x", String(width), "-y", String(height), "sh", "-c", script],
                 readingOutput: false)
        shellPID = pid_t(try tmux(["display-message", "-p", "-t", session, "#{pane_pid}"]).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    /// `NAME=value` words for `env`: the tests' UTF-8 locale and terminal type, a state directory
    /// of the test process's own (so no test writes the user's history or audit log), then `overrides`.
    static func environment(_ overrides: [String: String] = [:]) -> String {
        (["LANG": "C.UTF-8", "TERM": "screen-256color", "XDG_STATE_HOME": sharedState].merging(overrides) { $1 })
            .map { "\($0.key)=\(quote($0.value))" }.sorted().joined(separator: " ")
    }

    /// The state directory of tests that start a command with `init(script:)` and name none.
    static let sharedState = NSTemporaryDirectory() + "ft-tmux-state-\(getpid())"

    static func quote(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    @discardableResult
    func tmux(_ arguments: [String], readingOutput: Bool = true) throws -> String {
        try DashboardTmux.run(["/usr/bin/tmux", "-L", socket, "-f", "/dev/null"] + arguments, readingOutput: readingOutput)
    }

    /// Runs a tool (a tmux client) through `Tool.run`; returns what it printed on stdout, whatever its status.
    ///
    /// A client that starts the tmux server (`new-session`) must not hand it a pipe of ours: the
    /// server outlives the client and would hold the pipe open. So unless `readingOutput`, the
    /// client's stdout and stderr are /dev/null before it starts, and the server it forks inherits
    /// no pipe at all. (A pipe a forked daemon keeps would not hang `Tool.run` either: it stops
    /// reading when its child exits; but the server is not meant to write to it.)
    @discardableResult
    static func run(_ arguments: [String], readingOutput: Bool) throws -> String {
        guard readingOutput else {
            try Tool.run("/bin/sh", ["-c", "exec \"$@\" >/dev/null 2>&1", "sh"] + arguments)
            return ""
        }
        return try Tool.run(arguments[0], Array(arguments.dropFirst())).stdout
    }

    func capture() -> String { (try? tmux(["capture-pane", "-p", "-t", session])) ?? "" }

    /// The screen with its colours and attributes as escape sequences.
    func captureWithAttributes() -> String { (try? tmux(["capture-pane", "-p", "-e", "-t", session])) ?? "" }

    /// The SGR attributes (1 bold, 2 dim, 7 reverse, …) and foreground colour number (nil: the
    /// terminal's own) in effect where `needle` starts in a `captureWithAttributes()` line.
    static func graphicRendition(before needle: String, in line: Substring) -> (attributes: Set<Int>, foreground: Int?) {
        var attributes = Set<Int>()
        var foreground: Int?
        guard let end = line.range(of: needle)?.lowerBound else { return (attributes, foreground) }
        let prefix = String(line[..<end])
        let pattern = try! NSRegularExpression(pattern: "\u{1b}\\[([0-9;]*)m")
        for match in pattern.matches(in: prefix, range: NSRange(prefix.startIndex..., in: prefix)) {
            var codes = prefix[Range(match.range(at: 1), in: prefix)!].split(separator: ";", omittingEmptySubsequences: false).map { Int($0) ?? 0 }
            while !codes.isEmpty {
                let code = codes.removeFirst()
                switch code {
                case 0: attributes = []; foreground = nil
                case 22: attributes.subtract([1, 2])
                case 23...29: attributes.remove(code - 20)
                case 30...37: foreground = code - 30
                case 90...97: foreground = code - 90 + 8
                case 38 where codes.count >= 2 && codes[0] == 5: foreground = codes[1]; codes.removeFirst(2)
                case 39: foreground = nil
                case 1...9: attributes.insert(code)
                default: break
                }
            }
        }
        return (attributes, foreground)
    }

    func send(_ keys: String...) { _ = try? tmux(["send-keys", "-t", session] + keys) }

    /// Sends text literally (no key-name lookup).
    func type(_ text: String) { _ = try? tmux(["send-keys", "-t", session, "-l", text]) }

    /// Sends bytes as the terminal would deliver them (`send-keys -H`), e.g. a mouse report.
    func sendBytes(_ bytes: [UInt8]) {
        _ = try? tmux(["send-keys", "-t", session, "-H"] + bytes.map { String($0, radix: 16) })
    }

    /// A left-button press and release at a 0-based cell, in the xterm X10 mouse encoding that
    /// ncurses reads for `TERM=screen-256color` (kmous=\E[M).
    func click(column: Int, row: Int) {
        for button in [0, 3] { sendBytes([0x1b, 0x5b, 0x4d, UInt8(32 + button), UInt8(33 + column), UInt8(33 + row)]) }
    }

    func resize(width: Int, height: Int) { _ = try? tmux(["resize-window", "-t", session, "-x", String(width), "-y", String(height)]) }

    var alternateScreenOn: Bool {
        ((try? tmux(["display-message", "-p", "-t", session, "#{alternate_on}"])) ?? "").hasPrefix("1")
    }

    /// Polls the screen until `condition` holds; returns the last screen either way.
    ///
    /// curses sends a frame as a stream of bytes, and tmux may be captured half way through one: a
    /// dialog's title already drawn, its body not yet. So once the condition holds, the screen is
    /// captured again 100 ms later, when the frame has been written out, and that later screen is
    /// returned if the condition still holds on it (a live progress line may keep changing, so it
    /// need not be identical).
    @discardableResult
    func waitFor(timeout: TimeInterval = 20, _ condition: (String) -> Bool) -> (Bool, String) {
        let deadline = Date().addingTimeInterval(timeout)
        var screen = capture()
        while true {
            if condition(screen) {
                usleep(100_000)
                let settled = capture()
                if condition(settled) { return (true, settled) }
                screen = settled
                continue
            }
            if Date() > deadline { return (false, screen) }
            usleep(50_000)
            screen = capture()
        }
    }

    /// PIDs of the dashboard (the shell's children).
    var childPIDs: [pid_t] { shellPID > 0 ? DashboardTmux.children(of: shellPID) : [] }

    static func children(of parent: pid_t) -> [pid_t] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry), let fields = statFields(of: pid) else { return nil }
            return fields.count > 1 && pid_t(fields[1]) == parent ? pid : nil
        }
    }

    /// The fields of `/proc/PID/stat` after the command name: state, parent, …
    static func statFields(of pid: pid_t) -> [Substring]? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ")
    }

    /// The program a process runs (the name in `/proc/PID/comm`), nil once it has exited.
    static func command(of pid: pid_t) -> String? {
        guard let fields = statFields(of: pid), fields.first != "Z", fields.first != "X" else { return nil }
        return (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// CPU time (user + system) a process has used, in seconds.
    static func cpuSeconds(of pid: pid_t) -> Double? {
        guard let fields = statFields(of: pid), fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Waits until none of `processes` (PID and the program it ran) is running; returns those still
    /// running at `timeout`. A PID now running another program was reused, so its process is gone.
    static func waitUntilGone(_ processes: [(pid: pid_t, command: String)], timeout: TimeInterval) -> [(pid: pid_t, command: String)] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let running = processes.filter { command(of: $0.pid) == $0.command }
            if running.isEmpty || Date() > deadline { return running }
            usleep(20_000)
        }
    }

    /// Kills the tmux session, as closing the window or losing the SSH connection to it would:
    /// the pane's terminal hangs up.
    func killSession() { _ = try? tmux(["kill-session", "-t", session]) }

    /// Resident memory of the dashboard process, in kilobytes.
    func residentKilobytes(of pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return nil }
        return Int(line.split(separator: " ")[1])
    }

    func stop() {
        for pid in childPIDs { kill(pid, SIGKILL) }
        if shellPID > 0 { kill(shellPID, SIGKILL) }
        _ = try? tmux(["kill-server"])
        unlink("/tmp/tmux-\(getuid())/\(socket)")
        if let stateDirectory { try? FileManager.default.removeItem(atPath: stateDirectory) }
    }

    deinit { stop() }
}
