import CNcurses
import Glibc

/// The terminal the dashboard draws on and reads keys from: standard input and output where they
/// are a terminal, otherwise the controlling terminal, `/dev/tty` (as `less` and `vim` do), so that
/// `cat hosts | fleettrust --inventory -` still has a keyboard. Opened once, for the whole run.
struct TerminalDevice {
    let input: Int32
    let output: Int32
    /// The terminal type, `TERM`, checked against terminfo.
    let type: String

    /// Finds the terminal and checks that curses can drive it; every failure is one sentence.
    static func open(environment: [String: String]) throws(TerminalUnavailable) -> TerminalDevice {
        guard let type = environment["TERM"], !type.isEmpty else { throw .noTerminalType }
        var controlling: Int32?
        func controllingTerminal() throws(TerminalUnavailable) -> Int32 {
            if let controlling { return controlling }
            let fd = Glibc.open("/dev/tty", O_RDWR | O_CLOEXEC)
            guard fd >= 0 else { throw .noTerminal }
            controlling = fd
            return fd
        }
        do {
            let device = TerminalDevice(input: isatty(0) == 1 ? 0 : try controllingTerminal(),
                                        output: isatty(1) == 1 ? 1 : try controllingTerminal(), type: type)
            try device.checkType()
            return device
        } catch {
            if let controlling { Glibc.close(controlling) }
            throw error
        }
    }

    /// Refuses types terminfo does not know, and types that cannot move the cursor (`dumb`), for
    /// which curses would draw nothing usable.
    private func checkType() throws(TerminalUnavailable) {
        var status: Int32 = 0
        guard setupterm(type, output, &status) == OK else {
            throw status == -1 ? .noTerminfo : .unknownType(type)
        }
        defer { ft_release_terminal() }
        guard let cursorAddress = tigetstr("cup"), Int(bitPattern: cursorAddress) != -1 else {
            throw .cannotAddressCursor(type)
        }
    }

    /// Whether the terminal has hung up (curses tells that only as a read that returns at once).
    var hasHungUp: Bool {
        var descriptor = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) == 1 && descriptor.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0
    }

    /// Gives up the terminal this device opened, if it opened one.
    func close() {
        for fd in Set([input, output]) where fd > 2 { Glibc.close(fd) }
    }

    /// Runs `body` with standard input and output on this terminal, for a child process (`ssh`)
    /// that must read the keyboard even when the dashboard's own standard input is a pipe.
    func lendingStandardStreams<T>(_ body: () throws -> T) rethrows -> T {
        let moves = [(input, Int32(0)), (output, Int32(1))].filter { $0.0 != $0.1 }
        let saved = moves.map { dup($0.1) }
        for (terminal, standard) in moves { dup2(terminal, standard) }
        defer {
            for ((_, standard), copy) in zip(moves, saved) where copy >= 0 {
                dup2(copy, standard)
                Glibc.close(copy)
            }
        }
        return try body()
    }
}

/// Why the dashboard cannot run on this terminal, as one sentence (the command exits 64).
public enum TerminalUnavailable: Error, Equatable, Sendable, CustomStringConvertible {
    case noTerminalType
    case noTerminal
    case noTerminfo
    case unknownType(String)
    case cannotAddressCursor(String)

    public var description: String {
        switch self {
        case .noTerminalType:
            return "TERM is not set, so the dashboard cannot tell how to drive this terminal; set it (for example TERM=xterm-256color) or use `fleettrust scan`"
        case .noTerminal:
            return "standard input is not a terminal and there is no controlling terminal (/dev/tty) to read keys from, so the dashboard cannot run here; use `fleettrust scan` in scripts and cron"
        case .noTerminfo:
            return "no terminfo database was found, so the dashboard cannot drive this terminal; install ncurses-base or use `fleettrust scan`"
        case .unknownType(let type):
            return "TERM=\(type) is not a terminal type this system's terminfo knows; set TERM to one it does (for example xterm-256color) or use `fleettrust scan`"
        case .cannotAddressCursor(let type):
            return "TERM=\(type) cannot move the cursor, and the dashboard needs a full-screen terminal; use `fleettrust scan` for plain output"
        }
    }
}
