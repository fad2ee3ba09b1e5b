import Glibc
import Synchronization
import FleetTrustCore

/// The control masters running in this process, stopped (SIGTERM, while each has not exited) when
/// it exits.
///
/// A scan closes its masters when it ends or is cancelled; this covers the paths that never get
/// there (a command that prints and calls `exit` while a scan is still in flight, the dashboard
/// quitting mid-scan), so no authenticated session to a bastion outlives fleettrust. A SIGKILL of
/// fleettrust cannot be covered this way (documented). The processes, not their PIDs, are kept:
/// swift-subprocess reaps a master that ends by itself, after which its PID may name another process.
enum LiveMasters {
    private static let masters = Mutex<[ObjectIdentifier: ChildProcess]>([:])
    private static let registered = Mutex(false)

    static func add(_ master: ChildProcess) {
        let first = registered.withLock { done in
            defer { done = true }
            return !done
        }
        if first { atexit { LiveMasters.stopAll() } }
        masters.withLock { $0[ObjectIdentifier(master)] = master }
    }

    static func remove(_ master: ChildProcess) {
        masters.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(master)) }
    }

    private static func stopAll() {
        for master in masters.withLock({ Array($0.values) }) { master.signal(SIGTERM) }
    }
}
