import FleetTrustCore

/// What a decision will do, shown in full before `y` (or the typed host name) makes it happen.
/// Fingerprints are never cut: on a narrow terminal they wrap, since comparing them in full is
/// the point of these screens.
enum ConfirmationView {
    static func lines(_ confirmation: Confirmation, state: DashboardState, width: Int) -> [ScreenLine] {
        switch confirmation {
        case .trust(let items, let skipped, let marked):
            var lines = recordingLines(items, width: width) + batchWarning(items, marked: marked, state: state, width: width)
            lines += wrap(" Trust \(subject(items, marked: marked))? Entries are appended to \(clean(items[0].file))",
                             width, .dialogTitle)
            for item in items {
                lines += itemLines(item, randomart: items.count == 1, width: width)
                lines += withheldLines(item, width: width)
            }
            for reason in skipped { lines += wrap(" skipped: " + reason, width, .warning) }
            lines.append(ScreenLine(" y saves these entries; any other key cancels.", .statusKey))
            return lines
        case .pin(let items, let marked):
            var lines = recordingLines(items, width: width) + batchWarning(items, marked: marked, state: state, width: width)
            lines += wrap(" Pin the presented keys of \(subject(items, marked: marked)) in \(clean(items[0].file))?",
                             width, .dialogTitle)
            for item in items {
                lines += itemLines(item, randomart: items.count == 1, width: width)
                lines += withheldLines(item, width: width)
                if !item.spkiPins.isEmpty, let judged = state.rows[item.index].judged {
                    for sentence in tlsPinEffect(judged) { lines += wrap("    " + sentence, width, .warning) }
                }
            }
            lines.append(ScreenLine(" y pins these fingerprints; any other key cancels.", .statusKey))
            return lines
        case .forget(let item, let alarm, let typed):
            var lines: [ScreenLine] = []
            if let alarm {
                lines += wrap(" \(clean(item.host.name)) IS \(alarm.rawValue.uppercased()): forgetting it lets its present key be trusted next",
                              width, .statusChanged)
                lines += wrap(" Someone may be intercepting the connection, or the host was rebuilt. Check with its owner.", width, .danger)
            }
            lines += wrap(" Forget \(clean(item.host.name))? These known_hosts lines will be removed:", width, .dialogTitle)
            for line in item.previous {
                lines += wrap("  \(clean(line.location.description)) \(line.text)", width, .normal)
            }
            if !item.kept.isEmpty {
                lines += wrap(" These lines are KEPT, so ssh may still know the host through them:", width, .warning)
                for line in item.kept {
                    lines += wrap("  \(clean(line.location.description)) \(line.text)", width, .normal)
                    lines += wrap("    kept: \(line.keptByForget ?? "")", width, .dim)
                }
            }
            guard alarm != nil else {
                lines.append(ScreenLine(" y removes them (the audit log keeps a copy); any other key cancels.", .statusKey))
                return lines
            }
            lines += wrap(" y does NOT remove here. To forget it, type the host name and press Enter (the audit log keeps a copy); "
                          + "Esc cancels.", width, .warning)
            lines.append(ScreenLine([Span(" host name> ", .statusKey), Span(clean(typed), .filter)]))
            return lines
        case .replace(let item, _):
            return recordingLines([item], width: width) + replaceLines(item, state: state, width: width)
        }
    }

    static func clean(_ text: String) -> String { CleanText(text, limit: 200).value }

    /// Replay: the first line says the keys come from a recording, not from this machine.
    static func recordingLines(_ items: [DecisionItem], width: Int) -> [ScreenLine] {
        let sources = items.compactMap(\.recordedFrom).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        guard !sources.isEmpty else { return [] }
        return wrap(" These keys come from \(clean(sources.prefix(3).joined(separator: "; ")))\(sources.count > 3 ? "; …" : ""), "
                    + "not from a connection made by this machine.", width, .danger)
    }

    /// What pinning a TLS endpoint will change, under the policy it has, said before `y`: under
    /// `standard` and `pinned` a pin does not make an unvalidated chain trusted, and the way out
    /// is named.
    static func tlsPinEffect(_ judged: JudgedHost) -> [String] {
        let policy = judged.policy
        let pattern = PinSet.tlsPinPattern(for: judged.host)
        switch policy.builtIn {
        case .pinOnly:
            return ["Its policy is pin-only: the pin alone decides, so after y this endpoint is trusted."]
        case .off:
            return ["Its policy is off: nothing is checked, and the pin changes nothing."]
        default:
            guard judged.status == .untrusted || judged.tls?.chain.validates == false else {
                return ["Its policy is \(policy): once the pin is in force the chain and the pin must both hold; after y it is trusted."]
            }
            return ["Its policy is \(policy): a pin is checked in addition to the chain, and this chain leads to no trusted CA, "
                    + "so after y the endpoint stays untrusted.",
                    "To trust it on the pin alone, give it the pin-only policy (a policy file line '\(pattern) pin-only', "
                    + "or fleettrust_policy=pin-only in the inventory); or give its CA with --tls-ca-file."]
        }
    }

    /// Who a trust or pin is about: the host on screen by name, or a batch said to be one.
    static func subject(_ items: [DecisionItem], marked: Int) -> String {
        guard marked > 0 else { return Counted.of(items.count, "host") }
        guard marked > 1 else { return "your marked host" }
        return items.count == marked ? "a batch of your \(marked) marked hosts" : "a batch of \(items.count) of your \(marked) marked hosts"
    }

    /// The first line of a batch dialog when the batch is not what the cursor suggests: the
    /// highlighted host is not in it, or marked hosts in it are hidden by the filter. Said first
    /// and in alarm colours, so no terminal width cuts it away.
    static func batchWarning(_ items: [DecisionItem], marked: Int, state: DashboardState, width: Int) -> [ScreenLine] {
        guard marked > 0 else { return [] }
        var parts: [String] = []
        if let selected = state.selectedIndex, !items.contains(where: { $0.index == selected }) {
            parts.append("NOT the highlighted host \(clean(state.rows[selected].host.name)), but your marked hosts")
        }
        let hidden = Set(state.markedIndices).subtracting(state.visible).count
        if hidden > 0 { parts.append("\(hidden) of them hidden by the filter") }
        guard !parts.isEmpty else { return [] }
        return wrap(" " + parts.joined(separator: "; ") + ":", width, .danger)
    }

    /// The proved keys a trust or pin leaves out (`FirstUseKeys`), in one short line so the
    /// confirming key stays on an 80x24 screen; the detail view has their fingerprints.
    static func withheldLines(_ item: DecisionItem, width: Int) -> [ScreenLine] {
        guard !item.withheld.isEmpty else { return [] }
        return wrap("    left out, only a pin from their owner can vouch for them: " + item.withheld.map(\.kind.label).joined(separator: ", "),
                    width, .warning)
    }

    static func wrap(_ text: String, _ width: Int, _ role: StyleRole) -> [ScreenLine] {
        DisplayWidth.wrap(text, width: width, indent: "   ").map { ScreenLine($0, role) }
    }

    static func itemLines(_ item: DecisionItem, randomart: Bool, width: Int) -> [ScreenLine] {
        var lines: [ScreenLine] = []
        var head = ScreenLine()
        head.append(" \(clean(item.host.name)) ", .header)
        head.append("  saved as: " + item.names.map(clean).joined(separator: ", "))
        lines.append(head)
        for key in item.keys {
            lines += wrap("    \(key.kind.label) \(key.bits)  \(key.sha256Fingerprint)", width, .fingerprint)
        }
        for pin in item.spkiPins {
            lines += wrap("    leaf public key  pin-sha256:\(pin)", width, .fingerprint)
            if let fingerprint = item.certificateFingerprint { lines += wrap("    certificate sha256 \(fingerprint)", width, .dim) }
        }
        if randomart { lines += DetailView.randomart(item.keys, width: width) }
        return lines
    }

    static func replaceLines(_ item: DecisionItem, state: DashboardState, width: Int) -> [ScreenLine] {
        var lines = wrap(" THE HOST KEY OF \(clean(item.host.name)) HAS CHANGED", width, .statusChanged)
        lines += wrap(" Someone may be intercepting the connection, or the host was rebuilt. Check with its owner.", width, .danger)
        let recorded = item.previous.map { line in line.keyType.map { "\($0.label) \(line.fingerprint)" } ?? line.fingerprint }
        let presented = item.keys.map { "\($0.kind.label) \($0.sha256Fingerprint)" }
        if width >= 2 * 62 + 3 {
            let half = (width - 3) / 2
            var header = ScreenLine()
            header.append(" " + DisplayWidth.fit("recorded (known_hosts)", to: half), .columnHeader)
            header.append(" " + DisplayWidth.fit("presented now", to: half), .columnHeader)
            lines.append(header)
            for r in 0..<max(presented.count, recorded.count) {
                var line = ScreenLine()
                line.append(" " + DisplayWidth.fit(r < recorded.count ? recorded[r] : "", to: half), .danger)
                line.append(" " + DisplayWidth.fit(r < presented.count ? presented[r] : "", to: half), .fingerprint)
                lines.append(line)
            }
        } else {
            lines.append(ScreenLine(" recorded (known_hosts):", .columnHeader))
            for fingerprint in recorded { lines += wrap("   " + fingerprint, width, .danger) }
            lines.append(ScreenLine(" presented now:", .columnHeader))
            for fingerprint in presented { lines += wrap("   " + fingerprint, width, .fingerprint) }
        }
        for previous in item.previous {
            lines += wrap(" old entry at \(clean(previous.location.description)): \(previous.text)", width, .dim)
        }
        lines += wrap(" The old entry is kept in the audit log; the new one is written to \(clean(item.file)) under: "
                      + item.names.map(clean).joined(separator: ", "), width, .normal)
        lines += wrap(" y does NOT save here. To replace the key, type the host name and press Enter; Esc cancels.", width, .warning)
        if case .confirm(.replace(_, let typed)) = state.mode {
            lines.append(ScreenLine([Span(" host name> ", .statusKey), Span(clean(typed), .filter)]))
        }
        return lines
    }
}
