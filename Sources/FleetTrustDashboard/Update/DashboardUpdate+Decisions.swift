import FleetTrustCore

/// The trust, replace, pin and forget flows: each opens a confirmation, and only the confirming
/// key turns it into a `.write` effect.
extension DashboardUpdate {
    static func refuseIfReadOnly(_ state: inout DashboardState) -> Bool {
        guard state.settings.readOnly else { return false }
        state.notice = Notice("Read-only mode (--read-only): nothing is written.", isError: true)
        return true
    }

    /// The marked hosts, or the selected one when none is marked.
    static func targets(_ state: DashboardState) -> [Int] {
        let marked = state.markedIndices
        if !marked.isEmpty { return marked }
        return state.selectedIndex.map { [$0] } ?? []
    }

    static func item(_ index: Int, _ state: DashboardState, previous: [RecordedLine] = [], file: String? = nil) -> DecisionItem {
        let row = state.rows[index]
        let assessment = row.assessment
        return DecisionItem(index: index, host: row.host,
                            names: assessment?.knownHostsNames ?? [knownHostsName(for: row.host)],
                            keys: row.result?.keys.map(\.key).filter { !$0.isCertificate } ?? [], previous: previous,
                            file: file ?? assessment?.knownHostsFile ?? state.settings.knownHostsFiles.first ?? "",
                            seen: assessment?.recordedLines ?? [])
    }

    /// Why a host cannot be trusted with `y` right now, or nil when it can.
    static func trustRefusal(_ row: HostRow) -> String? {
        switch row.status {
        case .new: return nil
        case .trusted: return "\(row.host.name) is already trusted"
        case .changed: return "\(row.host.name) has a changed key (select it alone to replace it)"
        case .revoked, .pinMismatch:
            let why = row.assessment?.trustBlockedReason ?? (row.status == .revoked ? "its key is revoked" : "its key does not match the pin")
            return "\(row.host.name) cannot be trusted here: \(why)"
        case .pending: return "\(row.host.name) has not answered yet"
        case .unreachable, .error: return "\(row.host.name) presented no keys"
        }
    }

    static func startTrust(in state: inout DashboardState) {
        if refuseIfReadOnly(&state) { return }
        let indices = targets(state)
        guard !indices.isEmpty else { return }
        if indices.count == 1, state.rows[indices[0]].status == .changed {
            let row = state.rows[indices[0]]
            var previous: [RecordedLine] = []
            for line in row.assessment?.keys.flatMap(\.recorded) ?? [] where !previous.contains(line) { previous.append(line) }
            state.mode = .confirm(.replace(item: item(indices[0], state, previous: previous), typed: ""))
            return
        }
        var items: [DecisionItem] = []
        var skipped: [String] = []
        for index in indices {
            if let refusal = trustRefusal(state.rows[index]) { skipped.append(refusal) } else { items.append(item(index, state)) }
        }
        guard !items.isEmpty else {
            state.notice = Notice("Nothing to trust: " + skipped.joined(separator: "; ") + ".", isError: true)
            return
        }
        state.mode = .confirm(.trust(items: items, skipped: skipped))
    }

    static func startPin(in state: inout DashboardState) {
        if refuseIfReadOnly(&state) { return }
        guard let pinFile = state.settings.pinFile else {
            state.notice = Notice("No pin file: start with --pins FILE to pin keys.", isError: true)
            return
        }
        var items: [DecisionItem] = []
        var refusals: [String] = []
        for index in targets(state) {
            let row = state.rows[index]
            switch row.status {
            case .trusted, .new: items.append(item(index, state, file: pinFile))
            case .changed, .revoked, .pinMismatch:
                refusals.append("\(row.host.name) is \(row.status.rawValue); resolve that before pinning")
            default:
                refusals.append("\(row.host.name) presented no keys")
            }
        }
        guard !items.isEmpty else {
            state.notice = Notice("Nothing to pin: " + refusals.joined(separator: "; ") + ".", isError: true)
            return
        }
        state.mode = .confirm(.pin(items: items))
    }

    static func startForget(in state: inout DashboardState) {
        if refuseIfReadOnly(&state) { return }
        guard let index = state.selectedIndex else { return }
        let lines = state.rows[index].assessment?.recordedLines ?? []
        guard !lines.isEmpty else {
            state.notice = Notice("\(state.rows[index].host.name) has no known_hosts entries to forget.")
            return
        }
        let file = lines[0].location.file
        state.mode = .confirm(.forget(item: item(index, state, previous: lines, file: file)))
    }

    static func handleConfirmation(_ confirmation: Confirmation, _ key: Key, in state: inout DashboardState) -> [DashboardEffect] {
        if case .replace(let item, let typed) = confirmation {
            switch key {
            case .character(let c):
                state.mode = .confirm(.replace(item: item, typed: String((typed + String(c)).suffix(300))))
                return []
            case .backspace:
                state.mode = .confirm(.replace(item: item, typed: String(typed.dropLast())))
                return []
            case .enter where typed == item.host.name:
                return confirm(Decision(kind: .replace, items: [item]), in: &state)
            case .enter:
                state.mode = .list
                state.notice = Notice("The name did not match '\(item.host.name)'; nothing was saved.", isError: true)
                return []
            default:
                state.mode = .list
                state.notice = Notice("Cancelled; nothing was saved.")
                return []
            }
        }
        guard key == .character("y") else {
            state.mode = .list
            state.notice = Notice("Cancelled; nothing was saved.")
            return []
        }
        switch confirmation {
        case .trust(let items, _): return confirm(Decision(kind: .trust, items: items), in: &state)
        case .pin(let items): return confirm(Decision(kind: .pin, items: items), in: &state)
        case .forget(let item): return confirm(Decision(kind: .forget, items: [item]), in: &state)
        case .replace: return []
        }
    }

    static func confirm(_ decision: Decision, in state: inout DashboardState) -> [DashboardEffect] {
        state.mode = .list
        state.pendingWrites += 1
        for item in decision.items { state.rows[item.index].marked = false }
        return [.write(decision)]
    }
}
