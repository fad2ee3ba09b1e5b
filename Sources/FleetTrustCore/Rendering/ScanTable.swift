import Foundation
import Glibc

/// The human summary `scan --format table` prints: one line per host, then counts. A rendering
/// of each `JudgedHost`: the same status, pin answer and reason as the JSON and the dashboard.
public enum ScanTable {
    /// How the table meets its reader: a width to fit (nil: full rows, for files, pipes and
    /// `--wide`) and whether the status words are coloured (a terminal, without `NO_COLOR`).
    public struct Layout: Sendable {
        public var width: Int?
        public var color: Bool

        public init(width: Int? = nil, color: Bool = false) {
            self.width = width
            self.color = color
        }

        /// The layout for standard output (`toFile`: `--output` instead), its terminal asked for its width.
        public static func standardOutput(toFile: Bool, wide: Bool,
                                          environment: [String: String] = ProcessInfo.processInfo.environment) -> Layout {
            var size = winsize()
            let width = ioctl(1, UInt(TIOCGWINSZ), &size) == 0 ? Int(size.ws_col) : nil
            return Layout(toFile: toFile, isTerminal: isatty(1) == 1, terminalWidth: width, wide: wide, environment: environment)
        }

        /// The table fits the terminal it is printed on (`terminalWidth`, or `COLUMNS`), in colour
        /// there unless `NO_COLOR` or a dumb terminal; a file (`--output`), a pipe without
        /// `COLUMNS` and `--wide` get full rows, never colour.
        public init(toFile: Bool, isTerminal: Bool, terminalWidth: Int?, wide: Bool, environment: [String: String]) {
            guard !toFile else { self.init(); return }
            var width = environment["COLUMNS"].flatMap(Int.init).flatMap { (20...10_000).contains($0) ? $0 : nil }
            if width == nil, isTerminal, let terminalWidth, terminalWidth >= 20 { width = terminalWidth }
            self.init(width: wide ? nil : width,
                      color: isTerminal && environment["NO_COLOR"] == nil && environment["TERM"] != "dumb")
        }
    }

    /// The columns that give way, first to last, when the terminal is too narrow for the reason
    /// to keep `minimumReason` columns; STATUS, NAME and REASON always stay.
    static let givingWay = [5, 6, 4, 3, 2]
    static let minimumReason = 30

    /// The table's list of skipped inventory entries (nothing when none was skipped).
    public static func skippedLines(_ skipped: [SkippedInventoryEntry]) -> String {
        guard !skipped.isEmpty else { return "" }
        return "\nSkipped inventory entries (not checked; exit status at least 1):\n"
            + skipped.map { "  \($0)\n" }.joined()
    }

    public static func render(_ judged: [JudgedHost], layout: Layout = Layout()) -> String {
        let header = ["STATUS", "NAME", "ENDPOINT", "KEYS", "PIN", "POLICY", "DRIFT", "REASON"]
        var rows = judged.map { host -> [String] in
            var keys = host.keys.map(keyLabel).joined(separator: ",")
            if let leaf = host.tls?.leaf { keys = "tls:\(leaf.keyType.lowercased())\(leaf.keyBits)" }
            var reason = JudgementWords.reason(host)
            if let shared = host.keySharing.widest { reason += "; key shared by \(shared) hosts" }
            if let unfetched = JudgementWords.unfetched(host) { reason += "; " + unfetched }
            let pin = host.pin.verdict == .unpinned ? "-" : host.pin.verdict.rawValue
            let endpoint = host.labels.endpoint.value + (JudgementWords.routeMark(host.route).map { " " + $0 } ?? "")
            return [host.status.rawValue, host.labels.name.value, endpoint, keys.isEmpty ? "-" : keys, pin,
                    host.policy.description, host.drift?.kind.rawValue ?? "-", reason]
        }
        rows.insert(header, at: 0)
        var widths = (0..<header.count - 1).map { column in min(column == 1 ? 48 : 40, rows.map { $0[column].count }.max() ?? 0) }
        var shown = Array(0..<header.count)
        var reasonWidth: Int?
        if let width = layout.width {
            func room() -> Int { width - shown.dropLast().reduce(0) { $0 + widths[$1] + 2 } }
            for column in givingWay where room() < minimumReason { shown.removeAll { $0 == column } }
            if room() < minimumReason { widths[1] = max(8, widths[1] - (minimumReason - room())) }
            reasonWidth = max(8, room())
        }
        var lines = rows.enumerated().map { number, row in
            shown.map { column -> String in
                let cell = column < widths.count ? pad(row[column], widths[column]) : cut(row[column], reasonWidth)
                guard column == 0, number > 0, layout.color else { return cell }
                return paint(cell, judged[number - 1].status)
            }.joined(separator: "  ")
        }
        var counts: [HostStatus: Int] = [:]
        for host in judged { counts[host.status, default: 0] += 1 }
        lines.append("")
        lines.append("\(Counted.of(judged.count, "host")): " + HostStatus.allCases.compactMap { status in counts[status].map { "\($0) \(status.rawValue)" } }
            .joined(separator: ", "))
        lines.append("Keys: * the key ssh meets; ! changed, revoked or invalid; - not recorded (ssh does not meet it).")
        if judged.contains(where: \.policy.checksNothing) {
            lines.append("WARNING: some hosts have the policy off: nothing is checked for them (unchecked).")
        }
        lines += driftLines(judged)
        lines += expiringSoonest(judged)
        guard let width = layout.width else { return lines.joined(separator: "\n") }
        let table = rows.count
        return (lines.prefix(table) + lines.dropFirst(table).flatMap { wrap($0, width) }).joined(separator: "\n")
    }

    /// Every host whose keys moved since the last recorded probe, each move on a line; reverted
    /// keys first and loudest.
    static func driftLines(_ judged: [JudgedHost]) -> [String] {
        let drifted = judged.filter { $0.drift?.kind.isDrift == true }
            .sorted { ($0.drift?.kind == .reverted ? 0 : 1) < ($1.drift?.kind == .reverted ? 0 : 1) }
        guard !drifted.isEmpty else { return [] }
        var lines = ["", "Drift since the last recorded scan:"]
        for host in drifted {
            for move in host.drift?.moves ?? [] {
                lines.append("  \(host.labels.name)  " + JudgementWords.drift(move))
            }
        }
        if drifted.contains(where: { $0.drift?.kind == .reverted }) {
            lines.append("WARNING: a host presents again a key it had replaced (reverted): a half-done rotation or an intermittent man in the middle; exit status 2.")
        }
        return lines
    }

    /// The host certificates and TLS chains that expire first (at most ten each), with days left and warnings.
    static func expiringSoonest(_ judged: [JudgedHost]) -> [String] {
        let certificates = judged.flatMap { host in
            host.keys.compactMap { key -> (JudgedHost, JudgedKey, Int)? in
                guard let days = key.audit?.expiresInDays else { return nil }
                return (host, key, days)
            }
        }.sorted { $0.2 < $1.2 }
        var lines: [String] = []
        if !certificates.isEmpty {
            lines += ["", "Host certificates expiring soonest:"]
            for (host, key, days) in certificates.prefix(10) {
                let warnings = key.audit?.warnings.map(\.rawValue).joined(separator: ",") ?? ""
                lines.append("  \(days) days  \(host.labels.name)  \(shortType(key.typeName))  \(warnings)")
            }
        }
        let endpoints = judged.compactMap { host in host.tls.map { (host, $0) } }.sorted { $0.1.chainExpiresInDays < $1.1.chainExpiresInDays }
        if !endpoints.isEmpty {
            lines += ["", "TLS certificates expiring soonest (leaf / earliest in chain):"]
            for (host, tls) in endpoints.prefix(10) {
                let warnings = tls.warnings.map(\.rawValue).joined(separator: ",")
                lines.append("  \(tls.leafExpiresInDays) / \(tls.chainExpiresInDays) days  \(host.labels.name)  \(warnings)")
            }
        }
        return lines
    }

    /// `ed25519*` for the key ssh meets, `!` after an alarm, `-` after a key of a type not recorded.
    private static func keyLabel(_ key: JudgedKey) -> String {
        var label = shortType(key.typeName)
        if key.isNegotiated { label += "*" }
        if key.isAlarm { label += "!" }
        if key.verdict == .notRecorded { label += "-" }
        return label
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        let cut = cut(text, width)
        return cut + String(repeating: " ", count: max(0, width - cut.count))
    }

    private static func cut(_ text: String, _ width: Int?) -> String {
        guard let width, text.count > width else { return text }
        return String(text.prefix(max(0, width - 1))) + "…"
    }

    /// A line after the table, broken at spaces to fit `width` (continuations indented).
    private static func wrap(_ line: String, _ width: Int) -> [String] {
        guard line.count > width else { return [line] }
        let indent = String(line.prefix { $0 == " " })
        var result: [String] = []
        var current = indent
        for word in line.dropFirst(indent.count).split(separator: " ") {
            if current.count > indent.count, current.count + 1 + word.count > width {
                result.append(current)
                current = indent + "  " + word
            } else {
                current += current.count > indent.count ? " " + word : String(word)
            }
        }
        result.append(current)
        return result.map { cut($0, width) }
    }

    /// The status word in the colour of its alarm level (SGR; only for a terminal).
    private static func paint(_ cell: String, _ status: HostStatus) -> String {
        let code: String
        switch status.alarmLevel {
        case 0: code = "32"
        case 1: code = "33"
        default: code = "1;31"
        }
        var word = Substring(cell)
        while word.last == " " { word = word.dropLast() }
        return "\u{1B}[\(code)m\(word)\u{1B}[0m" + String(repeating: " ", count: cell.count - word.count)
    }

    static func shortType(_ type: String) -> String {
        switch type {
        case "ssh-ed25519": return "ed25519"
        case "ssh-rsa": return "rsa"
        case let t where t.hasPrefix("ecdsa-sha2-"): return "ecdsa-" + t.dropFirst("ecdsa-sha2-".count)
        case let t where t.hasSuffix("-cert-v01@openssh.com"):
            return shortType(KeyType.canonicalName(String(t.dropLast("-cert-v01@openssh.com".count)))) + "-cert"
        default: return type
        }
    }
}

