import FleetTrustCore

/// The dashboard's only logic: `update(state, message) -> (state, effects)`, pure, as in the
/// Elm architecture. Everything the user can do is decided here and tested without a terminal.
public enum DashboardUpdate {
    public static func update(_ state: DashboardState, _ message: DashboardMessage) -> (DashboardState, [DashboardEffect]) {
        var state = state
        let effects = apply(message, to: &state)
        return (state, effects)
    }

    /// The same, in place: the driver's loop uses this so a 10,000-row state is never copied.
    public static func apply(_ message: DashboardMessage, to state: inout DashboardState) -> [DashboardEffect] {
        switch message {
        case .resize(let size):
            state.size = size
            state.clampCursor()
            return []
        case .hostsUpdated(let updates):
            // A host judged otherwise while its confirmation is open (a sibling row under the same
            // known_hosts name landed, a file changed): what the person is asked no longer holds.
            if case .confirm(let confirmation) = state.mode, let moved = updates.first(where: { update in
                confirmation.indices.contains(update.index) && state.rows.indices.contains(update.index)
                    && state.rows[update.index].judged?.status != update.judged.status
            }) {
                state.mode = .list
                let now = moved.judged.status.rawValue
                state.notice = Notice("Nothing saved: \(state.rows[moved.index].host.name) is now \(now); look at it again.", isError: true)
            }
            for update in updates where state.rows.indices.contains(update.index) {
                if update.probed, state.rows[update.index].scanning {
                    state.rows[update.index].scanning = false
                    state.discovery.done += 1
                }
                state.rows[update.index].judged = update.judged
            }
            // "X has not answered yet" is wrong once X answers.
            if let waiting = state.notice?.untilAnswered, updates.contains(where: { waiting.contains($0.index) }) {
                state.notice = nil
            }
            state.refreshVisible()
            return []
        case .writeFinished(let succeeded, let message):
            state.pendingWrites = max(0, state.pendingWrites - 1)
            state.notice = Notice(message, isError: !succeeded)
            return []
        case .connectFinished(let message):
            state.notice = Notice(message)
            return []
        case .probeLoad(let load):
            state.discovery.load = load
            return []
        case .historyFailed(let message):
            state.notice = Notice("History not recorded: " + message, isError: true)
            return []
        case .click(let row):
            guard state.mode == .list else { return [] }
            let position = state.top + row - DashboardView.listStartRow
            if row >= DashboardView.listStartRow, position < state.visible.count, row < DashboardView.listStartRow + state.listHeight {
                state.cursor = position
                state.clampCursor()
            }
            return []
        case .key(let key):
            state.notice = nil
            return handle(key, in: &state)
        }
    }

    static func handle(_ key: Key, in state: inout DashboardState) -> [DashboardEffect] {
        switch state.mode {
        case .list:
            if key == .escape, !state.filterText.isEmpty {
                // Esc clears a filter kept with Enter, as it clears one being typed.
                state.filterText = ""
                state.refreshVisible()
                return []
            }
            return KeyBindings.action(for: key).map { perform($0, in: &state) } ?? []
        case .detail:
            return handleDetail(key, in: &state)
        case .help:
            switch key {
            case .down, .character("j"): state.detailScroll += 1
            case .up, .character("k"): state.detailScroll = max(0, state.detailScroll - 1)
            case .pageDown, .character(" "): state.detailScroll += state.listHeight
            case .pageUp: state.detailScroll = max(0, state.detailScroll - state.listHeight)
            default:
                state.mode = .list
                state.detailScroll = 0
            }
            state.detailScroll = min(state.detailScroll, max(0, HelpView.lines(width: state.size.width).count - 1))
            return []
        case .filterInput:
            handleFilterInput(key, in: &state)
            return []
        case .confirm(let confirmation):
            return handleConfirmation(confirmation, key, in: &state)
        case .quitConfirm:
            if key == .character("y") { return [.quit] }
            state.mode = .list
            return []
        }
    }

    static func handleDetail(_ key: Key, in state: inout DashboardState) -> [DashboardEffect] {
        switch key {
        case .escape, .enter, .character("q"), .left:
            state.mode = .list
            state.detailScroll = 0
        case .down, .character("j"):
            state.detailScroll += 1
        case .up, .character("k"):
            state.detailScroll = max(0, state.detailScroll - 1)
        case .pageDown:
            state.detailScroll += state.listHeight
        case .pageUp:
            state.detailScroll = max(0, state.detailScroll - state.listHeight)
        default:
            guard let action = KeyBindings.action(for: key) else { return [] }
            switch action {
            case .trust, .pin, .connect, .forget, .rescan, .toggleMD5, .help:
                return perform(action, in: &state)
            default:
                return []
            }
        }
        return []
    }

    static func handleFilterInput(_ key: Key, in state: inout DashboardState) {
        switch key {
        case .enter:
            state.mode = .list
            state.cursor = 0
            state.top = 0
            state.refreshVisible()
            if state.visible.isEmpty { state.notice = Notice("No host matches '\(state.filterText)'.") }
            return
        case .escape:
            state.mode = .list
            state.filterText = ""
        case .backspace:
            if !state.filterText.isEmpty { state.filterText.removeLast() }
        case .clearLine:
            state.filterText = ""
        case .character(let c) where !c.unicodeScalars.contains(where: Sanitizer.isControl):
            if state.filterText.count < 200 { state.filterText.append(c) }
        default:
            return
        }
        state.refreshVisible()
    }

    static func perform(_ action: DashboardAction, in state: inout DashboardState) -> [DashboardEffect] {
        switch action {
        case .moveUp: move(by: -1, in: &state)
        case .moveDown: move(by: 1, in: &state)
        case .pageUp: move(by: -state.listHeight, in: &state)
        case .pageDown: move(by: state.listHeight, in: &state)
        case .top: move(by: -state.visible.count, in: &state)
        case .bottom: move(by: state.visible.count, in: &state)
        case .detail:
            if state.selectedIndex != nil {
                state.mode = .detail
                state.detailScroll = 0
            }
        case .filter:
            state.mode = .filterInput
        case .cycleStatusFilter:
            state.statusFilter = state.statusFilter.next
            state.refreshVisible()
            state.notice = Notice("Showing: \(state.statusFilter.rawValue) (\(Counted.of(state.visible.count, "host"))).")
        case .cycleSort:
            state.sort = state.sort.next
            state.refreshVisible()
            state.notice = Notice("Sorted by \(state.sort.rawValue).")
        case .mark:
            if let index = state.selectedIndex {
                state.rows[index].marked.toggle()
                move(by: 1, in: &state)
            }
        case .toggleMD5:
            state.showMD5.toggle()
        case .help:
            state.mode = .help
            state.detailScroll = 0
        case .quit:
            if state.pendingWrites > 0 || !state.markedIndices.isEmpty {
                state.mode = .quitConfirm
                return []
            }
            return [.quit]
        case .rescan where state.settings.recording != nil, .rescanAll where state.settings.recording != nil:
            state.notice = Notice("This is a recording (\(state.settings.recording ?? "")): nothing is probed; scan again and reopen it to see the hosts now.")
            return []
        case .rescan:
            guard let index = state.selectedIndex else { return [] }
            return startProbe([index], in: &state)
        case .rescanAll:
            return startProbe(Array(state.rows.indices), in: &state)
        case .connect:
            return connect(in: &state)
        case .trust:
            startTrust(in: &state)
        case .pin:
            startPin(in: &state)
        case .forget:
            startForget(in: &state)
        }
        return []
    }

    static func move(by delta: Int, in state: inout DashboardState) {
        state.cursor += delta
        state.clampCursor()
    }

    /// Marks the hosts as being scanned and asks the driver to probe them.
    public static func startProbe(_ indices: [Int], in state: inout DashboardState) -> [DashboardEffect] {
        let fresh = indices.filter { state.rows.indices.contains($0) && !state.rows[$0].scanning }
        guard !fresh.isEmpty else { return [] }
        if !state.discovery.running { state.discovery = DiscoveryProgress() }
        for index in fresh { state.rows[index].scanning = true }
        state.discovery.total += fresh.count
        return [.probe(fresh)]
    }

    static func connect(in state: inout DashboardState) -> [DashboardEffect] {
        guard let index = state.selectedIndex else { return [] }
        let row = state.rows[index]
        guard row.judged?.actions.connect == true else {
            state.notice = Notice("Connect is only for trusted hosts; \(CleanText(row.host.name)) is \(row.status.rawValue).", isError: true)
            return []
        }
        return [.connect(index)]
    }
}
