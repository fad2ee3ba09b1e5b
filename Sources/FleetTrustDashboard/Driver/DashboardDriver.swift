import FleetTrustCore
import Foundation

/// Runs the dashboard: feeds terminal input and probe results to `DashboardUpdate`, performs the
/// effects it returns, and draws `DashboardView` through `CursesTerminal`. Everything here runs on
/// the calling thread (curses has one thread); probes run in tasks that post to the inbox.
public final class DashboardDriver {
    public enum Ending: Equatable, Sendable {
        case quit
        case interrupted(signal: Int32)
    }

    private var state: DashboardState
    private let services: DashboardServices
    private let terminal: CursesTerminal
    private let inbox = MessageInbox()
    private var probes: [Task<Void, Never>] = []

    public init(state: DashboardState, services: DashboardServices, terminal: CursesTerminal) {
        self.state = state
        self.services = services
        self.terminal = terminal
    }

    /// Probes every host, then runs until `q`, a terminating signal, or the terminal hanging up
    /// (ended as by SIGHUP, which a hung-up terminal does not always send). Leaves the terminal restored.
    public func run() -> Ending {
        defer {
            probes.forEach { $0.cancel() }
            terminal.end()
            services.history?.finish(waiting: 10)
        }
        state.size = terminal.size
        state.clampCursor()
        perform(DashboardUpdate.startProbe(Array(state.rows.indices), in: &state))
        terminal.draw(DashboardView.view(state))
        while true {
            if let signal = TerminalSignals.interrupted { return .interrupted(signal: signal) }
            var messages: [DashboardMessage] = []
            do {
                if let input = try terminal.read(timeout: 50) { messages.append(message(for: input)) }
            } catch {
                return .interrupted(signal: SIGHUP)
            }
            let updates = inbox.drain()
            if !updates.isEmpty { messages.append(.hostsUpdated(updates)) }
            messages += inbox.drainMessages()
            if let problem = services.history?.takeError() { messages.append(.historyFailed(message: problem)) }
            let load = services.prober.load
            if load != state.discovery.load { messages.append(.probeLoad(load)) }
            guard !messages.isEmpty else { continue }
            for message in messages {
                let effects = DashboardUpdate.apply(message, to: &state)
                if effects.contains(.quit) { return .quit }
                perform(effects)
            }
            terminal.draw(DashboardView.view(state))
        }
    }

    private func message(for input: TerminalInput) -> DashboardMessage {
        switch input {
        case .key(let key): return .key(key)
        case .resize(let size): return .resize(size)
        case .click(let row): return .click(row: row)
        }
    }

    private func perform(_ effects: [DashboardEffect]) {
        for effect in effects {
            switch effect {
            case .probe(let indices): startProbes(indices)
            case .write(let decision): apply(decision)
            case .connect(let index): connect(index)
            case .quit: break
            }
        }
    }

    private func startProbes(_ indices: [Int]) {
        let hosts = indices.map { state.rows[$0].host }
        let prober = services.prober, judge = services.judge, inbox = inbox, history = services.history
        probes.removeAll { $0.isCancelled }
        probes.append(Task.detached {
            for await event in prober.probe(hosts) where hosts.indices.contains(event.index) {
                let index = indices[event.index]
                for (other, judged) in judge.record(index, event.result) {
                    inbox.post(HostUpdate(index: other, judged: judged, probed: other == index))
                    if other == index, let sighting = HistorySighting(judged, source: .dashboard, seenAt: HistoryTime.nowMilliseconds()) {
                        history?.submit(sighting)
                    }
                }
            }
        })
    }

    /// Writes on a thread of their own (a file lock may be held by another fleettrust), each host
    /// its own guarded edit, so one host's refusal neither stops nor mislabels the others; each
    /// host's outcome goes to the audit log, and its judgement is redone from the files as written.
    private func apply(_ decision: Decision) {
        let services = services, inbox = inbox
        let thread = Thread {
            var saved: [String] = [], failed: [String] = []
            var events: [AuditEvent] = []
            // An edit the audit log would refuse to record is not made.
            do { try services.auditLog?.check() } catch {
                inbox.post(.writeFinished(succeeded: false, message: "Nothing saved: audit log: \(error)."))
                return
            }
            for item in decision.items {
                let single = Decision(kind: decision.kind, items: [item], alarm: decision.alarm)
                do {
                    for edit in single.edits { try services.editor.apply(edit) }
                    saved.append(single.summary)
                    events += single.auditEvents(user: services.user, time: Date(), outcome: .written)
                } catch {
                    failed.append("\(item.host.name): \(error)")
                    events += single.auditEvents(user: services.user, time: Date(), outcome: .refused("\(error)"))
                }
                if let judged = services.judge.rejudge(item.index) { inbox.post(HostUpdate(index: item.index, judged: judged, probed: false)) }
            }
            var summary = (saved + failed.map { "Not saved: " + $0 }).joined(separator: "\n")
            do { try services.auditLog?.append(events) } catch { summary += "\nAudit log: \(error)." }
            inbox.post(.writeFinished(succeeded: failed.isEmpty, message: summary))
        }
        thread.name = "fleettrust-write"
        thread.start()
    }

    private func connect(_ index: Int) {
        let row = state.rows[index]
        let arguments: [String]
        guard let judged = row.judged else { return }
        var temporary: PrivateKnownHosts?
        if let lines = ConnectCommand.policyKnownHosts(for: judged) {
            do { temporary = try PrivateKnownHosts(lines: lines) } catch {
                _ = DashboardUpdate.apply(.connectFinished(message: "\(error)."), to: &state)
                return
            }
        }
        defer { temporary?.remove() }
        do { arguments = try services.connect.arguments(for: judged, knownHosts: temporary.map { [$0.path] }) } catch {
            _ = DashboardUpdate.apply(.connectFinished(message: "\(error)."), to: &state)
            return
        }
        let outcome = terminal.suspended {
            let outcome = ForegroundChild.run(arguments)
            // Keep ssh's own last words on screen until they have been read.
            if outcome != .exited(0) { ForegroundChild.waitForEnter("\n[fleettrust] \(arguments[0]) did not succeed; press Enter to return to the dashboard.") }
            return outcome
        }
        let summary: String
        switch outcome {
        case .exited(let code): summary = "\(arguments[0]) to \(row.host.name) exited with status \(code)."
        case .signalled(let signal): summary = "\(arguments[0]) to \(row.host.name) ended by signal \(signal)."
        case .couldNotStart(let reason): summary = "Could not connect: \(reason)."
        }
        let fingerprints = judged.keys.compactMap { $0.key?.sha256Fingerprint }
        try? services.auditLog?.append([AuditEvent(time: Date(), user: services.user, action: .connected(command: arguments),
                                                   host: row.host, newFingerprints: fingerprints, outcome: .finished(summary))])
        state.size = terminal.size
        _ = DashboardUpdate.apply(.connectFinished(message: summary), to: &state)
    }
}
