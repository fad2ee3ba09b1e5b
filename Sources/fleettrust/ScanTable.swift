import FleetTrustCore

/// The human summary `scan --format table` prints: one line per host, then counts.
enum ScanTable {
    static func render(_ report: ScanReport) -> String {
        let header = ["STATUS", "NAME", "ENDPOINT", "KEYS", "METHOD / REASON"]
        var rows = report.hosts.map { host -> [String] in
            let keys = host.keys.map { shortType($0.type) + ($0.verdict == "changed" ? "!" : "") }.joined(separator: ",")
            var reason = host.error.map { "\($0.stage): \($0.message)" } ?? host.method
            if !host.sharesKeysWith.isEmpty { reason += "; same key as \(host.sharesKeysWith.prefix(3).joined(separator: ", "))" }
            let endpoint = host.host.contains(":") ? "[\(host.host)]:\(host.port)" : "\(host.host):\(host.port)"
            return [host.status.rawValue, host.name, endpoint, keys.isEmpty ? "-" : keys, reason]
        }
        rows.insert(header, at: 0)
        let widths = (0..<header.count - 1).map { column in min(40, rows.map { $0[column].count }.max() ?? 0) }
        var lines = rows.map { row in
            (0..<row.count).map { column in
                column < widths.count ? pad(row[column], widths[column]) : row[column]
            }.joined(separator: "  ")
        }
        let counts = HostStatus.allCases.compactMap { status in
            report.summary.byStatus[status.rawValue].map { "\($0) \(status.rawValue)" }
        }
        lines.append("")
        lines.append("\(report.summary.total) hosts: " + counts.joined(separator: ", "))
        return lines.joined(separator: "\n")
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        let cut = text.count > width ? String(text.prefix(width - 1)) + "…" : text
        return cut + String(repeating: " ", count: max(0, width - cut.count))
    }

    private static func shortType(_ type: String) -> String {
        switch type {
        case "ssh-ed25519": return "ed25519"
        case "ssh-rsa": return "rsa"
        case let t where t.hasPrefix("ecdsa-sha2-"): return "ecdsa-" + t.dropFirst("ecdsa-sha2-".count)
        case let t where t.hasSuffix("-cert-v01@openssh.com"): return shortType(String(t.dropLast("-cert-v01@openssh.com".count))) + "-cert"
        default: return type
        }
    }
}
