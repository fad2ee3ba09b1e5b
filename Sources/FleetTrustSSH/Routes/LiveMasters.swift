import Glibc
import Synchronization

/// The control masters running in this process, stopped (SIGTERM, by PID) when it exits.
///
/// A scan closes its masters when it ends or is cancelled; this covers the paths that never get
/// there (a command that prints and calls `exit` while a scan is still in flight, the dashboard
/// quitting mid-scan), so no authenticated session to a bastion outlives fleettrust. A SIGKILL of
/// fleettrust cannot be covered this way (documented).
enum LiveMasters {
    private static let pids = Mutex<Set<pid_t>>([])
    private static let registered = Mutex(false)

    static func add(_ pid: pid_t) {
        let first = registered.withLock { done in
            defer { done = true }
            return !done
        }
        if first { atexit { LiveMasters.stopAll() } }
        pids.withLock { _ = $0.insert(pid) }
    }

    static func remove(_ pid: pid_t) {
        pids.withLock { _ = $0.remove(pid) }
    }

    private static func stopAll() {
        for pid in pids.withLock({ $0 }) { _ = kill(pid, SIGTERM) }
    }
}
