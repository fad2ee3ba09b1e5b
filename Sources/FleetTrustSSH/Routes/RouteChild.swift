import Foundation
import Glibc
import FleetTrustCore

/// One child process of a route: an `ssh` control master to a bastion, an `ssh -W` channel
/// through one, or a ProxyCommand.
///
/// Spawned with `posix_spawn` from the probe's dedicated thread (not swift-subprocess, whose API
/// is async: these children are started, waited on and stopped inside blocking probe code, and
/// need a connected socket as their stdin and stdout). Each runs in a process group of its own,
/// so stopping it stops whatever it started too (the `ssh` of a ProxyCommand pipeline); it is
/// stopped and reaped by its PID, never by name. Its standard error goes to a file in the scan's
/// private directory, read once it has exited to say why a hop failed.
///
/// A control master is the exception: it stays in fleettrust's process group, so a Ctrl-C at the
/// terminal stops it together with fleettrust, and it is registered to be stopped when the
/// process exits (`LiveMasters`), so an interrupted scan leaves no login open on a bastion.
final class RouteChild: @unchecked Sendable {
    let pid: pid_t
    let stderrPath: String
    /// Whether the child leads a process group of its own (stopped as a group).
    private let ownGroup: Bool
    private var status: Int32?

    /// Starts `argv` with `stdio` (or /dev/null) as standard input and output; `ownGroup: false`
    /// for a long-lived master that must share fleettrust's fate.
    init(_ argv: [String], stdio: Int32?, stderrPath: String, ownGroup: Bool = true) throws(ProbeFailure) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdio {
            posix_spawn_file_actions_adddup2(&actions, stdio, 0)
            posix_spawn_file_actions_adddup2(&actions, stdio, 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGPIPE, SIGQUIT, SIGHUP] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK
                                                    | (ownGroup ? POSIX_SPAWN_SETPGROUP : 0)))
        let arguments = argv.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, argv[0], &actions, &attributes, arguments, environ)
        guard rc == 0 else {
            throw ProbeFailure(stage: .proxy, code: .proxyCommandFailed,
                               message: "cannot run \(Sanitizer.clean(argv[0], limit: 80)): \(String(cString: strerror(rc)))")
        }
        pid = child
        self.stderrPath = stderrPath
        self.ownGroup = ownGroup
        if !ownGroup { LiveMasters.add(child) }
    }

    /// The child, or its whole group when it leads one.
    private func signal(_ number: Int32) {
        _ = kill(ownGroup ? -pid : pid, number)
    }

    /// The exit status once the child has exited (reaping it), nil while it runs.
    func exitStatus() -> Int32? {
        if let status { return status }
        var raw: Int32 = 0
        let reaped = waitpid(pid, &raw, WNOHANG)
        guard reaped == pid || reaped < 0 else { return nil }
        status = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
        return status
    }

    /// Stops the child's whole process group (SIGTERM, then SIGKILL after `grace`) and reaps it.
    func stop(grace: Duration = .milliseconds(300)) {
        defer { if !ownGroup { LiveMasters.remove(pid) } }
        guard exitStatus() == nil else {
            if ownGroup { signal(SIGKILL) }
            return
        }
        signal(SIGTERM)
        let deadline = ContinuousClock.now + grace
        while exitStatus() == nil {
            if ContinuousClock.now > deadline {
                signal(SIGKILL)
                var raw: Int32 = 0
                _ = waitpid(pid, &raw, 0)
                status = 128 + SIGKILL
                break
            }
            usleep(2_000)
        }
        if ownGroup { signal(SIGKILL) }
    }

    /// The end (at most 4 KiB) of what the child wrote to standard error, as written.
    func errorOutput() -> String {
        let fd = open(stderrPath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        let size = lseek(fd, 0, SEEK_END)
        let start = max(0, size - 4096)
        lseek(fd, start, SEEK_SET)
        var buffer = [UInt8](repeating: 0, count: Int(size - start))
        let count = buffer.isEmpty ? 0 : read(fd, &buffer, buffer.count)
        return String(decoding: buffer.prefix(max(0, count)), as: UTF8.self)
    }

    /// The last lines of `errorOutput`, cleaned to one line of at most `limit` characters.
    func errorText(limit: Int = 300) -> String {
        let lines = errorOutput()
            .split(whereSeparator: { $0 == "\n" || $0 == "\r" })
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("@@@") && !$0.hasPrefix("Warning: Permanently added") }
        return Sanitizer.clean(lines.suffix(2).joined(separator: " / "), limit: limit)
    }

    deinit {
        if exitStatus() == nil { stop() }
        unlink(stderrPath)
    }
}
