import Glibc
import Synchronization

/// The child `ForegroundChild.run` is waiting for (0: none), for the signal forwarder.
private let runningChild = Atomic<pid_t>(0)

/// Runs a command in the terminal's foreground, as `system(3)` does: `posix_spawn` keeps the child
/// in our process group (so an interactive `ssh` can read the keyboard), the dashboard ignores
/// SIGINT/SIGQUIT while the child runs, and the child gets the default handlers back.
///
/// Not swift-subprocess, which the rest of fleettrust uses for children: connect is a synchronous
/// hand-over of the terminal from the curses thread (not an `async` call), and the child must stay
/// in the terminal's foreground process group with default SIGINT/SIGQUIT while this process
/// ignores them, which this small runner states exactly.
public enum ForegroundChild {
    public enum Outcome: Equatable, Sendable {
        case exited(Int32)
        case signalled(Int32)
        case couldNotStart(String)
    }

    public static func run(_ arguments: [String]) -> Outcome {
        guard let program = arguments.first else { return .couldNotStart("the connect command is empty") }
        let oldInt = signal(SIGINT, SIG_IGN)
        let oldQuit = signal(SIGQUIT, SIG_IGN)
        defer {
            signal(SIGINT, oldInt)
            signal(SIGQUIT, oldQuit)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGQUIT)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGHUP)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, program, nil, &attributes, argv, environ)
        guard spawned == 0 else { return .couldNotStart("cannot run \(program): \(String(cString: strerror(spawned)))") }
        runningChild.store(pid, ordering: .sequentiallyConsistent)
        defer { runningChild.store(0, ordering: .sequentiallyConsistent) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let termination = status & 0x7f
        return termination == 0 ? .exited((status >> 8) & 0xff) : .signalled(termination)
    }

    /// Prints `prompt` on the terminal and waits for a line from it (the keyboard, not standard
    /// input, which may be a pipe).
    public static func waitForEnter(_ prompt: String) {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let bytes = Array((prompt + " ").utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        var byte: UInt8 = 0
        while true {
            let got = read(fd, &byte, 1)
            if got < 0 && errno == EINTR { continue }
            if got <= 0 || byte == 0x0a || byte == 0x0d { return }
        }
    }

    /// From now on, `signals` no longer end this process: they are passed on to the child `run` is
    /// waiting for, if any. For a parent that must outlive its child to clean up after it (the demo
    /// stops its sshd fleet when the dashboard ends, also when the terminal hangs up or on SIGTERM).
    public static func forwardToChild(_ signals: [Int32]) {
        for number in signals {
            signal(number) { received in
                let child = runningChild.load(ordering: .sequentiallyConsistent)
                if child > 0 { kill(child, received) }
            }
        }
    }
}
