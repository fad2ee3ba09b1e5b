import Dispatch
import Foundation
import FleetTrustCore
import Synchronization

/// The line `scan` and `sync` keep on a terminal's standard error while probing: how many hosts
/// are done, how long it has been, how many are in flight and how many still queued, and which
/// hosts it is still waiting for, redrawn every second so a scan waiting on silent hosts visibly
/// waits rather than seeming stuck.
public final class ScanProgressLine: Sendable {
    private struct State {
        var done: Set<Int> = []
        var ended = false
    }

    private let names: [String]
    private let activity: @Sendable (Int) -> String?
    private let load: @Sendable () -> ProbeLoad
    private let state = Mutex(State())
    private let started = ContinuousClock.now
    private nonisolated(unsafe) let timer: any DispatchSourceTimer

    public init(hosts: [InventoryHost], activity: @escaping @Sendable (Int) -> String?,
         load: @escaping @Sendable () -> ProbeLoad) {
        names = hosts.map { Sanitizer.clean($0.name, limit: 40) }
        self.activity = activity
        self.load = load
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "fleettrust.progress"))
        timer.schedule(deadline: .now() + 1, repeating: 1)
        timer.setEventHandler { [weak self] in self?.draw() }
        timer.resume()
    }

    public func finished(_ index: Int) {
        state.withLock { _ = $0.done.insert(index) }
        draw()
    }

    /// Clears the line for good.
    public func end() {
        timer.cancel()
        state.withLock { $0.ended = true }
        FileHandle.standardError.write(Data("\r\u{1b}[K".utf8))
    }

    private func draw() {
        guard let text = state.withLock({ state -> String? in
            state.ended ? nil : Self.text(done: state.done, names: names, seconds: started.duration(to: .now).components.seconds,
                                          load: load(), activity: activity)
        }) else { return }
        FileHandle.standardError.write(Data("\r\u{1b}[K\(Self.fitted(text, columns: Self.terminalColumns()))".utf8))
    }

    /// The line cut to one row of the terminal: a line that wrapped would leave its first rows
    /// behind when it is redrawn or cleared (`\r` and erase-line reach only the last row).
    static func fitted(_ text: String, columns: Int?) -> String {
        guard let columns, columns > 1, text.count >= columns else { return text }
        return String(text.prefix(columns - 2)) + "…"
    }

    /// Standard error's terminal width, nil when it is not a terminal.
    private static func terminalColumns() -> Int? {
        var size = winsize()
        guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// `scanned 3/5, 12 s, 2 in flight, 0 queued; waiting for web4 (banner), web5 (connect)`, at
    /// most three names and then a count.
    public static func text(done: Set<Int>, names: [String], seconds: Int64, load: ProbeLoad, activity: (Int) -> String?) -> String {
        var line = "fleettrust: scanned \(done.count)/\(names.count), \(seconds) s, \(load.inFlight) in flight, \(load.waiting) queued"
        let waiting = names.indices.lazy.filter { !done.contains($0) }
        let shown = Array(waiting.prefix(3)).map { index in names[index] + (activity(index).map { " (\($0))" } ?? "") }
        guard !shown.isEmpty else { return line }
        let more = names.count - done.count - shown.count
        line += "; waiting for " + shown.joined(separator: ", ") + (more > 0 ? " and \(more) more" : "")
        return String(line.prefix(200))
    }
}
