import FleetTrustCore

/// `view(state) -> Screen`: pure, so every screen can be checked in tests. Only the rows in sight
/// are built, which keeps a 10,000-host list as quick as a ten-host one.
public enum DashboardView {
    /// Terminal row of the first host (after the two header lines and the column titles).
    public static let listStartRow = 3

    public static func view(_ state: DashboardState) -> Screen {
        let width = max(1, state.size.width), height = max(1, state.size.height)
        var lines = HeaderView.lines(state, width: width)
        let status = StatusLineView.lines(state, width: width, room: max(1, height / 3))
        let bodyHeight = max(0, height - lines.count - status.count)
        var body: [ScreenLine]
        var cursor: (row: Int, column: Int)?
        switch state.mode {
        case .list, .filterInput, .quitConfirm:
            body = HostListView.lines(state, width: width, height: bodyHeight)
        case .detail:
            body = Array(DetailView.lines(state, width: width).dropFirst(state.detailScroll))
        case .help:
            body = Array(HelpView.lines(width: width).dropFirst(state.detailScroll))
        case .confirm(let confirmation):
            body = ConfirmationView.lines(confirmation, state: state, width: width)
        }
        body = Array(body.prefix(bodyHeight))
        while body.count < bodyHeight { body.append(ScreenLine()) }
        lines += body
        if state.mode == .filterInput { cursor = (lines.count, min(width - 1, status[0].width)) }
        if case .confirm(let confirmation) = state.mode, confirmation.requiredName != nil {
            cursor = (lines.count, min(width - 1, status[0].width))
        }
        lines += status
        return Screen(width: width, height: height, lines: Array(lines.prefix(height)).map { $0.clipped(to: width) },
                      cursor: cursor)
    }
}

enum HeaderView {
    static func lines(_ state: DashboardState, width: Int) -> [ScreenLine] {
        var title = ScreenLine(fill: .header)
        title.append(" fleettrust ", .header)
        if state.settings.readOnly { title.append(" READ-ONLY ", .danger) }
        // First, where the line is never cut: a known_hosts path that did not exist is most often a typo.
        if state.settings.knownHostsFiles.contains(where: state.settings.missingKnownHostsFiles.contains) {
            title.append(" known_hosts file missing ", .danger)
        }
        if state.rows.contains(where: { $0.judged?.policy.checksNothing == true }) {
            title.append(" UNSAFE: policy off for some hosts (nothing checked) ", .danger)
        }
        if let days = state.rows.lazy.compactMap({ $0.judged?.certificateDaysLeft }).min() {
            title.append(" first cert expiry ", .headerLabel)
            title.append("\(days) days ", days < 30 ? .danger : .header)
        }

        title.append(state.settings.recording == nil ? " inventory " : " recording ", .headerLabel)
        title.append(Sanitizer.clean(state.settings.inventoryPath, limit: 120) + " (\(Counted.of(state.rows.count, "host"))) ", .header)
        title.append(" known_hosts ", .headerLabel)
        for (number, file) in state.settings.knownHostsFiles.enumerated() {
            title.append((number == 0 ? "" : ", ") + Sanitizer.clean(file, limit: 120), .header)
            if state.settings.missingKnownHostsFiles.contains(file) { title.append(" (no such file at start)", .danger) }
        }
        title.append(" ", .header)
        if let pins = state.settings.pinFile {
            title.append(" pins ", .headerLabel)
            title.append(Sanitizer.clean(pins, limit: 120) + " ", .header)
        }


        var counts = ScreenLine()
        // Marks first: a batch that `t` acts on is never cut away by a narrow terminal.
        let marked = state.markedIndices
        if !marked.isEmpty {
            let hidden = Set(marked).subtracting(state.visible).count
            counts.append(" * \(marked.count) marked" + (hidden > 0 ? " (\(hidden) hidden by the filter)" : "") + " ",
                          hidden > 0 ? .warning : .marked)
            counts.append(" ")
        }
        for status in HostStatus.allCases {
            guard let n = state.statusCounts[status], n > 0 else { continue }
            counts.append(" \(status.letter) \(n) \(status.rawValue) ", StyleRole.status(status))
            counts.append(" ")
        }
        if state.discovery.running {
            let progress = state.discovery
            var label = " discovery \(progress.done)/\(progress.total) "
            if let load = progress.load { label += "· \(load.inFlight) in flight, \(load.waiting) queued " }
            counts.append(label, .normal)
            let barWidth = max(10, min(40, width - counts.width - 2))
            let filled = progress.total == 0 ? 0 : barWidth * progress.done / progress.total
            counts.append(String(repeating: " ", count: filled), .progressDone)
            counts.append(String(repeating: "·", count: barWidth - filled), .progressTodo)
        }
        var view = " \(state.visible.count) shown · sort \(state.sort.rawValue) · \(state.statusFilter.rawValue)"
        if !state.filterText.isEmpty { view += " · /\(CleanText(state.filterText, limit: 200))" }
        if counts.width + DisplayWidth.of(view) < width { counts.append(view, .dim) }
        switch state.mode {
        case .list, .filterInput, .quitConfirm:
            return [title, counts, HostListView.columnHeader(Columns.layout(width: width, nameWidth: state.widestName,
                                                                            endpointWidth: state.widestEndpoint))]
        default:
            return [title, counts]
        }
    }
}

enum StatusLineView {
    /// The status line; a notice of several lines (every bad line of a pin file) takes up to
    /// `room` lines above the bottom.
    static func lines(_ state: DashboardState, width: Int, room: Int) -> [ScreenLine] {
        if let notice = state.notice, state.mode != .filterInput, state.mode != .quitConfirm {
            let wrapped = notice.text.lines.flatMap { DisplayWidth.wrap(" " + $0, width: max(10, width - 1), indent: "   ") }
            if wrapped.count > 1 {
                var shown = Array(wrapped.prefix(room))
                if wrapped.count > room { shown[room - 1] = " … \(wrapped.count - room + 1) more lines" }
                return shown.map { ScreenLine([Span($0 + " ", notice.isError ? .danger : .statusLine)], fill: .statusLine) }
            }
        }
        return [line(state, width: width)]
    }

    static func line(_ state: DashboardState, width: Int) -> ScreenLine {
        if state.mode == .filterInput {
            return ScreenLine([Span("/", .statusKey), Span(Sanitizer.clean(state.filterText, limit: 200), .filter),
                               Span("   Enter keep  Esc clear", .statusLine)], fill: .statusLine)
        }
        if state.mode == .quitConfirm {
            let marked = state.markedIndices.count
            var what: [String] = []
            if marked > 0 { what.append("\(Counted.of(marked, "marked host")) not saved") }
            if state.pendingWrites > 0 { what.append("a save in progress") }
            return ScreenLine([Span(" Quit with \(what.joined(separator: " and "))? ", .danger),
                               Span(" y ", .statusKey), Span(" quit  any other key stays ", .statusLine)], fill: .statusLine)
        }
        if let notice = state.notice {
            return ScreenLine([Span(" " + notice.text.value + " ", notice.isError ? .danger : .statusLine)], fill: .statusLine)
        }
        var line = ScreenLine(fill: .statusLine)
        var all = hints(state)
        // `?` and `q` always show: other hints give way from the end when the line is too narrow.
        let fixed = all.filter { $0.0 == "?" || $0.0 == "q" }
        all.removeAll { $0.0 == "?" || $0.0 == "q" }
        func used(_ pairs: [(String, String)]) -> Int { pairs.reduce(0) { $0 + DisplayWidth.of(" \($1.0)  \($1.1) ") } }
        // Moving about gives way first, so at 80 columns the keys that act on the host still show.
        for key in ["s", "f", "/", "Enter", "↑↓"] where used(all) + used(fixed) > width { all.removeAll { $0.0 == key } }
        while !all.isEmpty, used(all) + used(fixed) > width { all.removeLast() }
        for (key, label) in all + fixed {
            line.append(" \(key) ", .statusKey)
            line.append(" \(label) ", .statusLine)
        }
        return line
    }

    /// The keys that do something for the current mode and selection.
    static func hints(_ state: DashboardState) -> [(String, String)] {
        switch state.mode {
        case .help: return [("j/k", "scroll"), ("any other key", "back"), ("q", "back")]
        case .confirm(.replace(let item, let typed)):
            return [("type", "the host name '\(CleanText(item.host.name, limit: 80))' to replace"), ("Enter", "confirm"),
                    ("Esc", "cancel"), (">", CleanText(typed, limit: 80).value)]
        case .confirm(.forget(let item, .some, let typed)):
            return [("type", "the host name '\(CleanText(item.host.name, limit: 80))' to forget"), ("Enter", "confirm"),
                    ("Esc", "cancel"), (">", CleanText(typed, limit: 80).value)]
        case .confirm(.forget): return [("y", "remove"), ("any other key", "cancel")]
        case .confirm(.pin): return [("y", "pin"), ("any other key", "cancel")]
        case .confirm: return [("y", "save"), ("any other key", "cancel")]
        case .detail:
            return [("Esc", "back"), ("j/k", "scroll"), ("m", state.showMD5 ? "hide MD5" : "MD5")] + actionHints(state)
        default:
            var hints = [("↑↓", "move"), ("Enter", "detail"), ("/", "filter"), ("f", state.statusFilter.rawValue),
                         ("s", "sort"), ("Space", "mark")]
            hints += actionHints(state)
            return hints + [("?", "help"), ("q", "quit")]
        }
    }

    /// The actions the selected host allows (`HostActions`, as the keys decide them).
    static func actionHints(_ state: DashboardState) -> [(String, String)] {
        guard let row = state.selectedRow else { return [] }
        let actions = row.judged?.actions
        var hints: [(String, String)] = []
        if !state.settings.readOnly {
            let marked = state.mode == .detail ? [] : state.markedIndices
            switch actions?.trust {
            case .replace where marked.isEmpty: hints.append(("t", "replace"))
            case .save, .pin: hints.append(("t", "trust"))
            default: if !marked.isEmpty { hints.append(("t", "trust")) }
            }
            switch actions?.pin {
            case .keys where state.settings.pinFile != nil, .leaf where state.settings.pinFile != nil: hints.append(("p", "pin"))
            default: break
            }
            if !(actions?.forgettable.isEmpty ?? true) { hints.append(("x", "forget")) }
        }
        if actions?.connect == true { hints.append(("c", "connect")) }
        // A recording is not probed: r only says so.
        if state.settings.recording == nil { hints.append(("r", "rescan")) }
        return hints
    }
}
