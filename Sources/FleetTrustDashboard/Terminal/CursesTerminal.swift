import CNcurses
import Foundation
import Synchronization

/// The terminal is gone: reading it can never give a key again.
public struct TerminalHungUp: Error, Equatable, Sendable {}

/// Input the curses layer hands to the driver.
public enum TerminalInput: Equatable, Sendable {
    case key(Key)
    case resize(TerminalSize)
    case click(row: Int)
}

/// The only code that talks to curses: it sets the terminal up, copies a `Screen` to it, reads
/// keys, and gives the terminal back. It must be used from one thread (curses is not thread-safe).
public final class CursesTerminal {
    private let device: TerminalDevice
    private let window: UnsafeMutablePointer<WINDOW>
    private let palette: CursesPalette
    /// Whether the locale can encode what the views draw; if not, text is drawn in ASCII.
    private let unicode: Bool
    private var ended = false

    /// Whether the dashboard can run on this process's terminal: call it before taking any other
    /// step, and report the error (one sentence) instead of opening the dashboard.
    public static func check(environment: [String: String]) throws(TerminalUnavailable) {
        try TerminalDevice.open(environment: environment).close()
    }

    /// Takes over the terminal (see `check`). Call `end()` (also on errors) to give it back.
    public init(theme: Theme, noColor: Bool) {
        setlocale(LC_ALL, "")
        unicode = String(cString: ft_locale_codeset()) == "UTF-8"
        TerminalSignals.install()
        let device: TerminalDevice
        do { device = try TerminalDevice.open(environment: ProcessInfo.processInfo.environment) } catch {
            fatalError("\(error)")
        }
        guard newterm(device.type, fdopen(device.output, "w"), fdopen(device.input, "r")) != nil,
              let window = ft_stdscr() else { fatalError("newterm failed for TERM=\(device.type)") }
        self.device = device
        self.window = window
        cbreak()
        noecho()
        nonl()
        keypad(window, true)
        CursesTerminal.defineEditingKeys()
        set_escdelay(25)
        curs_set(0)
        mousemask(mmask_t(CursesTerminal.buttonOneEvents), nil)
        mouseinterval(0)
        palette = CursesPalette(theme: theme, noColor: noColor)
    }

    /// Home and End as tmux, screen, PuTTY and rxvt send them, whatever terminfo says for TERM
    /// (xterm's entry knows only `ESC O H` and `ESC O F`).
    static let editingKeys: [(sequence: String, key: Int32)] = [
        ("\u{1b}[1~", KEY_HOME), ("\u{1b}[7~", KEY_HOME), ("\u{1b}[H", KEY_HOME), ("\u{1b}OH", KEY_HOME),
        ("\u{1b}[4~", KEY_END), ("\u{1b}[8~", KEY_END), ("\u{1b}[F", KEY_END), ("\u{1b}OF", KEY_END),
    ]

    private static func defineEditingKeys() {
        for (sequence, key) in editingKeys { define_key(sequence, key) }
    }

    /// BUTTON1_PRESSED | BUTTON1_CLICKED in the ncurses 6 mouse protocol.
    static let buttonOneEvents = 0x2 | 0x4

    public var size: TerminalSize { TerminalSize(width: Int(getmaxx(window)), height: Int(getmaxy(window))) }

    public func draw(_ screen: Screen) {
        werase(window)
        for (row, line) in screen.lines.enumerated() where row < screen.height {
            wmove(window, Int32(row), 0)
            var column = 0
            for span in line.spans {
                wattrset(window, palette.attribute(for: span.role))
                put(span.text)
                column += DisplayWidth.of(span.text)
            }
            let lastRow = row == screen.height - 1
            let rest = screen.width - column - (lastRow ? 1 : 0)
            if rest > 0 {
                wattrset(window, palette.attribute(for: line.fill))
                put(String(repeating: " ", count: rest))
            }
        }
        wattrset(window, ft_attr_normal())
        if let cursor = screen.cursor {
            curs_set(1)
            wmove(window, Int32(cursor.row), Int32(cursor.column))
        } else {
            curs_set(0)
        }
        wrefresh(window)
    }

    private func put(_ text: String) {
        let text = unicode ? text : ASCIIGlyphs.ascii(text)
        var wide = text.unicodeScalars.map { wchar_t(bitPattern: $0.value) }
        wide.append(0)
        waddnwstr(window, wide, Int32(wide.count - 1))
    }

    /// Waits up to `milliseconds` for one input; throws once the terminal has hung up (the SSH
    /// session dropped, the tmux pane was killed), where curses would return at once, forever.
    public func read(timeout milliseconds: Int) throws(TerminalHungUp) -> TerminalInput? {
        wtimeout(window, Int32(milliseconds))
        var character: wint_t = 0
        let kind = wget_wch(window, &character)
        if kind == ERR {
            if device.hasHungUp { throw TerminalHungUp() }
            return nil
        }
        if kind == KEY_CODE_YES { return functionKey(Int32(character)) }
        switch character {
        case 10, 13: return .key(.enter)
        case 27: return .key(.escape)
        case 8, 127: return .key(.backspace)
        case 9: return .key(.tab)
        case 21: return .key(.clearLine)
        default:
            guard let scalar = Unicode.Scalar(UInt32(character)), character >= 32 else { return nil }
            return .key(.character(Character(scalar)))
        }
    }

    private func functionKey(_ code: Int32) -> TerminalInput? {
        switch code {
        case KEY_UP: return .key(.up)
        case KEY_DOWN: return .key(.down)
        case KEY_LEFT: return .key(.left)
        case KEY_RIGHT: return .key(.right)
        case KEY_PPAGE: return .key(.pageUp)
        case KEY_NPAGE: return .key(.pageDown)
        case KEY_HOME: return .key(.home)
        case KEY_END: return .key(.end)
        case KEY_ENTER: return .key(.enter)
        case KEY_BACKSPACE: return .key(.backspace)
        case ft_key_resize(): return .resize(size)
        case ft_key_mouse():
            var event = MEVENT()
            guard getmouse(&event) == OK, Int(event.bstate) & CursesTerminal.buttonOneEvents != 0 else { return nil }
            return .click(row: Int(event.y))
        default: return nil
        }
    }

    /// Hands the terminal to a child process (`ssh`) and takes it back afterwards.
    public func suspended<T>(_ body: () throws -> T) rethrows -> T {
        def_prog_mode()
        endwin()
        defer {
            reset_prog_mode()
            clearok(window, true)
            wrefresh(window)
        }
        return try device.lendingStandardStreams(body)
    }

    /// Restores the terminal. Safe to call more than once.
    public func end() {
        guard !ended else { return }
        ended = true
        if ft_has_alternate_screen() == 0 {
            // Without an alternate screen (vt100) the last frame would stay under the shell prompt.
            werase(window)
            wrefresh(window)
        }
        endwin()
    }

    deinit { end() }
}

/// SIGINT, SIGTERM and SIGHUP only raise a flag; the UI loop sees it within one tick and leaves
/// curses cleanly (endwin is not async-signal-safe, so the handler does not call it).
private let receivedSignal = Atomic<Int32>(0)

public enum TerminalSignals {

    static func install() {
        for signal in [SIGINT, SIGTERM, SIGHUP] { installHandler(signal) }
    }

    static func installHandler(_ number: Int32) {
        Glibc.signal(number) { receivedSignal.store($0, ordering: .relaxed) }
    }

    public static var interrupted: Int32? {
        let value = receivedSignal.load(ordering: .relaxed)
        return value == 0 ? nil : value
    }
}
