import Dispatch
import Foundation
import Synchronization

/// SIGINT, SIGTERM and SIGHUP during a scan (Ctrl-C, `timeout`, a cron job killed, a dropped SSH
/// session) end it in order instead of killing it mid-write: the probes are cancelled, what has
/// finished is still recorded in the history, a `--output` temporary file is removed (the target
/// keeps its old content, so a monitoring collector never reads half a report), and one line says so.
///
/// Before the probes start and past them there is nothing to cancel, and a read that never returns
/// (a FIFO named as a `RevokedHostKeys` or known_hosts file by an inventory) must not leave the
/// scan deaf to signals: there, and at a second signal at any time, the process ends at once
/// (`exitAtOnce`).
public final class ScanInterruption: Sendable {
    private let received = Mutex<Int32?>(nil)
    private let onSignal = Mutex<(@Sendable () -> Void)?>(nil)
    private let pastProbes = Mutex(false)
    private let forcedExit = Mutex<(@Sendable (Int32) -> Void)?>(nil)
    private nonisolated(unsafe) let sources: [any DispatchSourceSignal]

    public static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    public init() {
        let queue = DispatchQueue(label: "fleettrust.scan-signals")
        var sources: [any DispatchSourceSignal] = []
        for number in Self.signals {
            Glibc.signal(number, SIG_IGN)
            sources.append(DispatchSource.makeSignalSource(signal: number, queue: queue))
        }
        self.sources = sources
        for (number, source) in zip(Self.signals, sources) {
            source.setEventHandler { [weak self] in self?.fire(number) }
            source.resume()
        }
    }

    /// The signal that stopped the scan, if one did.
    public var receivedSignal: Int32? { received.withLock { $0 } }

    /// Runs `action` when a signal arrives (at once, if one already has).
    public func whenReceived(_ action: @escaping @Sendable () -> Void) {
        let already = onSignal.withLock { slot -> Bool in
            slot = action
            return receivedSignal != nil
        }
        if already { action() }
    }

    /// What ends the process at once: `cleanup` runs, one line says so, exit status 128+signal.
    public func exitAtOnce(cleanup: @escaping @Sendable () -> Void) {
        forcedExit.withLock { $0 = { number in
            cleanup()
            FileHandle.standardError.write(Data("fleettrust: interrupted by \(Self.name(number)): stopped at once, nothing recorded and no report written\n".utf8))
            exit(128 + number)
        } }
    }

    /// The probes are over: from now on a signal ends the process at once.
    public func probesFinished() {
        pastProbes.withLock { $0 = true }
    }

    private func fire(_ number: Int32) {
        let first = received.withLock { value -> Bool in
            guard value == nil else { return false }
            value = number
            return true
        }
        let cancel = onSignal.withLock { $0 }
        // Before the probes start (the files the deciding connection's order is read from may be
        // a FIFO) and after them there is nothing to cancel: end at once.
        if !first || pastProbes.withLock({ $0 }) || cancel == nil {
            if let forced = forcedExit.withLock({ $0 }) { forced(number) } else { exit(128 + number) }
        }
        cancel?()
    }

    /// `SIGTERM`, as the shell names it.
    public static func name(_ number: Int32) -> String {
        switch number {
        case SIGINT: return "SIGINT"
        case SIGTERM: return "SIGTERM"
        case SIGHUP: return "SIGHUP"
        default: return "signal \(number)"
        }
    }
}
