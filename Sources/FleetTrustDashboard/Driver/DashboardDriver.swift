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
        let prober = services.prober, assessor = services.assessor, inbox = inbox
        probes.removeAll { $0.isCancelled }
        probes.append(Task.detached {
            for await event in prober.probe(hosts) where hosts.indices.contains(event.index) {
                let assessment = assessor.assess(hosts[event.index], event.result)
                inbox.post(HostUpdate(index: indices[event.index], result: event.result, assessment: assessment))
            }
        })
    }

    private func apply(_ decision: Decision) {
        var succeeded = true
        var summary: String
        do {
            summary = try services.write(decision)
        } catch {
            succeeded = false
            summary = "Not saved: \(error)"
        }
        let records = AuditLog.records(for: decision, user: services.user, time: Date(),
                                       outcome: succeeded ? "saved" : summary)
        do { try audit(records) } catch { summary += " Audit log: \(error)." }
        let outcome = DashboardMessage.writeFinished(succeeded: succeeded, message: summary)
        let refreshed = decision.items.compactMap { item -> HostUpdate? in
            guard let result = state.rows[item.index].result else { return nil }
            return HostUpdate(index: item.index, result: nil, assessment: services.assessor.assess(item.host, result))
        }
        for message in [DashboardMessage.hostsUpdated(refreshed), outcome] {
            _ = DashboardUpdate.apply(message, to: &state)
        }
    }

    private func audit(_ records: [AuditLog.Record]) throws {
        try services.auditLog?.append(records)
    }

    private func connect(_ index: Int) {
        let row = state.rows[index]
        let arguments: [String]
        do { arguments = try services.connect.arguments(for: row.host) } catch {
            _ = DashboardUpdate.apply(.connectFinished(message: "\(error)."), to: &state)
            return
        }
        let outcome = terminal.suspended { ForegroundChild.run(arguments) }
        let summary: String
        switch outcome {
        case .exited(let code): summary = "\(arguments[0]) to \(row.host.name) exited with status \(code)."
        case .signalled(let signal): summary = "\(arguments[0]) to \(row.host.name) ended by signal \(signal)."
        case .couldNotStart(let reason): summary = "Could not connect: \(reason)."
        }
        let fingerprints = row.result?.keys.map(\.key.sha256Fingerprint) ?? []
        try? audit([AuditLog.connectRecord(host: row.host, fingerprints: fingerprints, command: arguments,
                                           user: services.user, time: Date(), outcome: summary)])
        state.size = terminal.size
        _ = DashboardUpdate.apply(.connectFinished(message: summary), to: &state)
    }
}
