import Glibc
import Synchronization

/// The control masters this process keeps, asked to stop when it exits.
///
/// A scan stops its masters when its pool is let go; this covers the paths that never get there
/// (a command that prints and calls `exit` while a scan is in flight, the dashboard quitting), so
/// no login to a bastion outlives fleettrust by more than a moment. What `exit` cannot cover (a
/// SIGKILL, a crash) the masters cover themselves: each ends `ControlMaster.persistSeconds` after
/// the kernel closes our connection to it.
enum LiveMasters {
    private static let masters = Mutex<[ObjectIdentifier: ControlMaster]>([:])
    private static let registered = Mutex(false)

    static func add(_ master: ControlMaster) {
        let first = registered.withLock { done in
            defer { done = true }
            return !done
        }
        if first { atexit { LiveMasters.stopAll() } }
        masters.withLock { $0[ObjectIdentifier(master)] = master }
    }

    static func remove(_ master: ControlMaster) {
        masters.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(master)) }
    }

    private static func stopAll() {
        for master in masters.withLock({ Array($0.values) }) { master.requestStop() }
    }
}
