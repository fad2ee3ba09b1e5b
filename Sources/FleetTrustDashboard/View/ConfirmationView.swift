import FleetTrustCore

/// What a decision will do, shown in full before `y` (or the typed host name) makes it happen.
enum ConfirmationView {
    static func lines(_ confirmation: Confirmation, state: DashboardState, width: Int) -> [ScreenLine] {
        switch confirmation {
        case .trust(let items, let skipped):
            var lines = [ScreenLine(" Trust \(items.count) host\(items.count == 1 ? "" : "s")? Entries are appended to \(clean(items[0].file))", .dialogTitle)]
            for item in items { lines += itemLines(item, randomart: items.count == 1, width: width) }
            lines += skipped.map { ScreenLine(" skipped: " + $0, .warning) }
            lines.append(ScreenLine(" y saves these entries; any other key cancels.", .statusKey))
            return lines
        case .pin(let items):
            var lines = [ScreenLine(" Pin the presented keys of \(items.count) host\(items.count == 1 ? "" : "s") in \(clean(items[0].file))?", .dialogTitle)]
            for item in items { lines += itemLines(item, randomart: items.count == 1, width: width) }
            lines.append(ScreenLine(" y pins these fingerprints; any other key cancels.", .statusKey))
            return lines
        case .forget(let item):
            var lines = [ScreenLine(" Forget \(clean(item.host.name))? These known_hosts lines will be removed:", .dialogTitle)]
            for line in item.previous {
                var text = ScreenLine()
                text.append("  \(line.location) ", .dim)
                text.append(line.text)
                lines.append(text)
            }
            lines.append(ScreenLine(" y removes them (the audit log keeps a copy); any other key cancels.", .statusKey))
            return lines
        case .replace(let item, _):
            return replaceLines(item, state: state, width: width)
        }
    }

    static func clean(_ text: String) -> String { Sanitizer.clean(text, limit: 200) }

    static func itemLines(_ item: DecisionItem, randomart: Bool, width: Int) -> [ScreenLine] {
        var lines: [ScreenLine] = []
        var head = ScreenLine()
        head.append(" \(clean(item.host.name)) ", .header)
        head.append("  saved as: " + item.names.map(clean).joined(separator: ", "))
        lines.append(head)
        for key in item.keys {
            var line = ScreenLine()
            line.append("    " + DisplayWidth.fit("\(key.kind.label) \(key.bits)", to: 14))
            line.append(key.sha256Fingerprint, .fingerprint)
            lines.append(line)
        }
        if randomart { lines += DetailView.randomart(item.keys, width: width) }
        return lines
    }

    static func replaceLines(_ item: DecisionItem, state: DashboardState, width: Int) -> [ScreenLine] {
        var lines = [ScreenLine(" THE HOST KEY OF \(clean(item.host.name)) HAS CHANGED", .statusChanged)]
        lines.append(ScreenLine(" Someone may be intercepting the connection, or the host was rebuilt. Check with its owner.", .danger))
        let half = max(20, (width - 3) / 2)
        var header = ScreenLine()
        header.append(" " + DisplayWidth.fit("recorded (known_hosts)", to: half), .columnHeader)
        header.append(" " + DisplayWidth.fit("presented now", to: half), .columnHeader)
        lines.append(header)
        let presented = item.keys.map { "\($0.kind.label) \($0.sha256Fingerprint)" }
        let recorded = item.previous.map { "\($0.fingerprint)" }
        for r in 0..<max(presented.count, recorded.count) {
            var line = ScreenLine()
            line.append(" " + DisplayWidth.fit(r < recorded.count ? recorded[r] : "", to: half), .danger)
            line.append(" " + DisplayWidth.fit(r < presented.count ? presented[r] : "", to: half), .fingerprint)
            lines.append(line)
        }
        for previous in item.previous {
            lines.append(ScreenLine(" old entry at \(previous.location): \(previous.text)", .dim))
        }
        lines.append(ScreenLine(" The old entry is kept in the audit log; the new one is written to \(clean(item.file)) under: "
                                + item.names.map(clean).joined(separator: ", ")))
        lines.append(ScreenLine(" y does NOT save here. To replace the key, type the host name and press Enter; Esc cancels.", .warning))
        if case .confirm(.replace(_, let typed)) = state.mode {
            lines.append(ScreenLine([Span(" host name> ", .statusKey), Span(clean(typed), .filter)]))
        }
        return lines
    }
}
