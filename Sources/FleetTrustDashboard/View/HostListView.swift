import FleetTrustCore

/// The list columns, laid out for a terminal width: low-priority columns drop out on narrow
/// terminals, and spare width goes to the fingerprint, then the name.
struct Columns: Equatable {
    enum Kind: CaseIterable { case mark, status, name, groups, endpoint, types, fingerprint, knownHosts, pin, method, rtt }

    var widths: [(Kind, Int)]

    static let titles: [Kind: String] = [
        .mark: " ", .status: "STATUS", .name: "NAME", .groups: "GROUPS", .endpoint: "ADDRESS:PORT", .types: "KEY TYPES",
        .fingerprint: "FINGERPRINT", .knownHosts: "KNOWN_HOSTS", .pin: "PIN", .method: "METHOD", .rtt: "RTT",
    ]

    static func == (a: Columns, b: Columns) -> Bool { a.widths.map(\.1) == b.widths.map(\.1) }

    static func layout(width: Int) -> Columns {
        let minimum: [Kind: Int] = [.mark: 1, .status: 13, .name: 10, .endpoint: 15, .types: 22, .fingerprint: 16,
                                    .knownHosts: 13, .pin: 9, .method: 11, .rtt: 7]
        let dropOrder: [Kind] = [.method, .pin, .rtt, .types, .knownHosts, .endpoint, .fingerprint]
        var kinds = Kind.allCases.filter { $0 != .groups }
        func needed() -> Int { kinds.reduce(0) { $0 + minimum[$1]! } + kinds.count - 1 }
        for kind in dropOrder where needed() > width { kinds.removeAll { $0 == kind } }
        var widths = Dictionary(uniqueKeysWithValues: kinds.map { ($0, minimum[$0]!) })
        var spare = max(0, width - needed())
        for (kind, cap) in [(Kind.fingerprint, 50), (.name, 24), (.endpoint, 23)] where widths[kind] != nil {
            let add = min(spare, max(0, cap - widths[kind]!))
            widths[kind]! += add
            spare -= add
        }
        // Groups take only width left once the columns above are at full size.
        if spare >= 9, let after = kinds.firstIndex(of: .name) {
            kinds.insert(.groups, at: after + 1)
            widths[.groups] = min(spare - 1, 24)
            spare -= widths[.groups]! + 1
        }
        widths[.name]! += spare
        return Columns(widths: kinds.map { ($0, widths[$0]!) })
    }
}

enum HostListView {
    static func columnHeader(_ columns: Columns) -> ScreenLine {
        let text = columns.widths.map { DisplayWidth.fit(Columns.titles[$0.0]!, to: $0.1) }.joined(separator: " ")
        return ScreenLine(text, .columnHeader)
    }

    static func lines(_ state: DashboardState, width: Int, height: Int) -> [ScreenLine] {
        let columns = Columns.layout(width: width)
        guard !state.visible.isEmpty else {
            let why = state.rows.isEmpty ? "The inventory lists no hosts." : "No host matches the filter (Esc in / clears it, f cycles)."
            return [ScreenLine(" " + why, .dim)]
        }
        let end = min(state.visible.count, state.top + height)
        return (state.top..<end).map { position in
            line(for: state.rows[state.visible[position]], columns: columns, selected: position == state.cursor)
        }
    }

    static func line(for row: HostRow, columns: Columns, selected: Bool) -> ScreenLine {
        var line = ScreenLine(fill: selected ? .selected : .normal)
        for (offset, (kind, width)) in columns.widths.enumerated() {
            let (text, role) = cell(kind, row)
            let fitted = kind == .fingerprint ? DisplayWidth.fit(DisplayWidth.middleTruncate(text, to: width), to: width)
                : DisplayWidth.fit(text, to: width, alignRight: kind == .rtt)
            line.append(fitted, selected && kind != .status ? .selected : role)
            if offset < columns.widths.count - 1 { line.append(" ", selected ? .selected : .normal) }
        }
        return line
    }

    static func cell(_ kind: Columns.Kind, _ row: HostRow) -> (String, StyleRole) {
        let assessment = row.assessment
        switch kind {
        case .mark:
            return (row.marked ? "*" : " ", .marked)
        case .status:
            let word = row.scanning && row.result == nil ? "scanning" : statusWord(row.status)
            return ("\(row.status.letter) \(word)", StyleRole.status(row.status))
        case .name:
            return (Sanitizer.clean(row.host.name, limit: 200), .normal)
        case .groups:
            return (Sanitizer.clean(row.host.groups.joined(separator: ","), limit: 200), .dim)
        case .endpoint:
            return (Sanitizer.clean(row.host.endpointLabel, limit: 200), .normal)
        case .types:
            let kinds = row.result?.keys.map(\.key.kind) ?? []
            var labels = kinds.contains(where: \.isCertificate) ? ["CERT"] : []
            for kind in kinds where !kind.isCertificate && !labels.contains(kind.label) { labels.append(kind.label) }
            return (labels.joined(separator: " "), .normal)
        case .fingerprint:
            if let key = row.primaryKey { return (key.sha256Fingerprint, .fingerprint) }
            if let failure = row.result?.failure { return (failure.description, .dim) }
            return ("", .normal)
        case .knownHosts:
            return (assessment?.knownHostsVerdict?.rawValue ?? "", assessment.map { StyleRole.status($0.status) } ?? .normal)
        case .pin:
            return (assessment?.pinVerdict?.rawValue ?? "", assessment?.pinVerdict == .mismatch ? .danger : .normal)
        case .method:
            return (assessment?.method ?? "", .normal)
        case .rtt:
            return (row.roundTripMilliseconds.map { "\(Int($0.rounded()))ms" } ?? "", .dim)
        }
    }

    static func statusWord(_ status: HostStatus) -> String {
        status == .pinMismatch ? "pin-miss" : status.rawValue
    }
}
