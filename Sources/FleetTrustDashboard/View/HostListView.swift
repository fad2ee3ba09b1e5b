import FleetTrustCore

/// The list columns, laid out for a terminal width: low-priority columns drop out on narrow
/// terminals, and spare width goes to the name first, then the address, then the fingerprint.
struct Columns: Equatable {
    enum Kind: CaseIterable { case mark, drift, status, name, groups, endpoint, types, fingerprint, knownHosts, pin, method, rtt }

    var widths: [(Kind, Int)]

    static let titles: [Kind: String] = [
        .mark: " ", .drift: "~", .status: "STATUS", .name: "NAME", .groups: "GROUPS", .endpoint: "ADDRESS:PORT", .types: "KEY TYPES",
        .fingerprint: "FINGERPRINT (ssh meets)", .knownHosts: "KNOWN_H", .pin: "PIN", .method: "METHOD", .rtt: "RTT",
    ]

    static func == (a: Columns, b: Columns) -> Bool { a.widths.map(\.1) == b.widths.map(\.1) }

    /// `nameWidth` and `endpointWidth` are the widest name and endpoint in the inventory: names
    /// get the room they need first, then addresses, then the fingerprint.
    static func layout(width: Int, nameWidth: Int = 24, endpointWidth: Int = 21) -> Columns {
        let minimum: [Kind: Int] = [.mark: 1, .drift: 1, .status: 15, .name: 16, .endpoint: 15, .types: 14, .fingerprint: 16,
                                    .knownHosts: 8, .pin: 8, .method: 8, .rtt: 6]
        let dropOrder: [Kind] = [.rtt, .types, .method, .endpoint, .pin, .fingerprint, .knownHosts]
        var kinds = Kind.allCases.filter { $0 != .groups }
        func needed() -> Int { kinds.reduce(0) { $0 + minimum[$1]! } + kinds.count - 1 }
        for kind in dropOrder where needed() > width { kinds.removeAll { $0 == kind } }
        // Names are what people look for: round-trip time and key types give way before a name is cut.
        let wantedName = max(minimum[.name]!, min(40, nameWidth))
        for kind in [Kind.rtt, .types] where kinds.contains(kind) && needed() - minimum[.name]! + wantedName > width {
            kinds.removeAll { $0 == kind }
        }
        var widths = Dictionary(uniqueKeysWithValues: kinds.map { ($0, minimum[$0]!) })
        var spare = max(0, width - needed())
        for (kind, cap) in [(Kind.name, min(40, nameWidth)), (.endpoint, min(41, endpointWidth)), (.fingerprint, 50), (.types, 22)]
            where widths[kind] != nil {
            let add = min(spare, max(0, cap - widths[kind]!))
            widths[kind]! += add
            spare -= add
        }
        // Groups take only width left once the columns above are at full size.
        if spare >= 9, let after = kinds.firstIndex(of: .name) {
            kinds.insert(.groups, at: after + 1)
            widths[.groups] = min(spare - 1, 32)
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
        let columns = Columns.layout(width: width, nameWidth: state.widestName, endpointWidth: state.widestEndpoint)
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
            let fitted = kind == .fingerprint && (row.primaryKey != nil || row.judged?.tls?.leaf != nil)
                ? DisplayWidth.fit(DisplayWidth.middleTruncate(text, to: width), to: width)
                : DisplayWidth.fit(text, to: width, alignRight: kind == .rtt)
            if selected && kind == .status {
                // The status keeps its colour on the selection bar; its padding is part of the bar.
                let word = String(fitted.reversed().drop { $0 == " " }.reversed())
                line.append(word, role)
                line.append(String(repeating: " ", count: DisplayWidth.of(fitted) - DisplayWidth.of(word)), .selected)
            } else {
                line.append(fitted, selected ? .selected : role)
            }
            if offset < columns.widths.count - 1 { line.append(" ", selected ? .selected : .normal) }
        }
        return line
    }

    static func cell(_ kind: Columns.Kind, _ row: HostRow) -> (String, StyleRole) {
        let judged = row.judged
        switch kind {
        case .mark:
            return (row.marked ? "*" : " ", .marked)
        case .drift:
            return driftMark(judged?.drift?.kind)
        case .status:
            let word = row.scanning && judged == nil ? "scanning" : statusWord(row.status)
            return ("\(row.status.letter) \(word)", StyleRole.status(row.status))
        case .name:
            return (judged?.labels.name.value ?? CleanText(row.host.name).value, .normal)
        case .groups:
            return ((judged?.labels ?? HostLabels(row.host)).groups.map(\.value).joined(separator: ","), .dim)
        case .endpoint:
            let endpoint = judged?.labels.endpoint.value ?? CleanText(row.host.endpointLabel).value
            return (endpoint + (JudgementWords.routeMark(row.host.route).map { " " + $0 } ?? ""), .normal)
        case .types:
            // A TLS row: its protocol version and the days left of the earliest-expiring certificate.
            if let tls = judged?.tls { return ("\(tls.handshake.version) \(tls.chainExpiresInDays)d", tls.warnings.isEmpty ? .normal : .warning) }
            let keys = judged?.keys ?? []
            let days = judged?.certificateDaysLeft
            var labels = keys.contains(where: \.isCertificate) ? [days.map { "CERT \($0)d" } ?? "CERT"] : []
            for key in keys { if let kind = key.key?.kind, !kind.isCertificate, !labels.contains(kind.label) { labels.append(kind.label) } }
            return (labels.joined(separator: " "), .normal)
        case .fingerprint:
            if let key = row.primaryKey { return (key.key?.sha256Fingerprint ?? "undecodable certificate", .fingerprint) }
            if let leaf = judged?.tls?.leaf { return (leaf.pin, .fingerprint) }
            if let judged { return (JudgementWords.reason(judged), .dim) }
            return ("", .normal)
        case .knownHosts:
            guard let judged else { return ("", .normal) }
            let verdict = judged.knownHostsAnswer
            return (verdict.map(knownHostsCode) ?? "-", verdict?.isAlarm == true ? .danger : StyleRole.status(judged.status))
        case .pin:
            guard let judged else { return ("", .normal) }
            return (pinCode(judged.pin.verdict), judged.pin.verdict == .mismatch ? .danger
                    : judged.pin.verdict == .reportedMismatch ? .warning : .normal)
        case .method:
            guard let judged else { return ("", .normal) }
            switch judged.policy.builtIn {
            case .off: return ("OFF!", .danger)
            case .pinOnly where judged.status != .trusted: return ("pin-only", .warning)
            default: return (methodCode(judged), .normal)
            }
        case .rtt:
            return (row.roundTripMilliseconds.map { "\(Int($0.rounded()))ms" } ?? "", .dim)
        }
    }

    /// One character for how the keys moved since the last scan (the `?` screen has the legend):
    /// `!` reverted, `~` changed, `-` removed, `+` added; blank for none or a first scan.
    static func driftMark(_ kind: DriftKind?) -> (String, StyleRole) {
        switch kind ?? .firstScan {
        case .reverted: return ("!", .danger)
        case .changed: return ("~", .warning)
        case .removed: return ("-", .warning)
        case .added: return ("+", .warning)
        case .none, .firstScan: return (" ", .normal)
        }
    }

    /// Short codes (the `?` screen has the legend), so the column reads at 120 columns.
    static func knownHostsCode(_ verdict: KeyVerdict) -> String {
        switch verdict {
        case .trusted: return "ok"
        case .trustedByCA: return "ok-CA"
        case .new: return "new"
        case .notRecorded: return "unrec"
        case .changed: return "CHANGED"
        case .revoked: return "REVOKED"
        case .ipMismatch: return "IP-DIFF"
        case .invalidCertificate: return "INVALID"
        }
    }

    static func pinCode(_ verdict: PinVerdict) -> String {
        switch verdict {
        case .unpinned: return "-"
        case .matched: return "match"
        case .mismatch: return "MISMATCH"
        case .expired: return "expired"
        case .reportedMismatch: return "report!"
        case .notListed: return "other"
        }
    }

    static func methodCode(_ judged: JudgedHost) -> String {
        judged.trustedBy.map { basis -> String in
            switch basis {
            case .knownHosts: return "kh"
            case .certificateAuthority: return "ca"
            case .bareName: return "bare"
            case .additionalName: return "alias"
            case .pin: return "pin"
            case .caPin: return "ca-pin"
            case .certificateChain: return "chain"
            case .localhostExemption: return "local"
            case .dns: return "dns"
            }
        }.joined(separator: "+")
    }

    static func statusWord(_ status: HostStatus) -> String {
        switch status {
        case .invalidCertificate: return "invalid-cert"
        default: return status.rawValue
        }
    }
}
