import Foundation

/// What `scan --dry-run --format json` prints: every host a scan would probe, where, by which
/// route, and under which name it would be looked up in which known_hosts files, without probing.
///
/// The names and files are the judge's own (`FleetJudge.target`, `KnownHostsSets.paths`), so the
/// plan says what the scan would do, not a second guess at it.
public struct ScanPlan: Encodable, Sendable {
    public static let currentVersion = 1

    /// How the host would be reached: `direct`, or `proxy` through the hops `ssh` takes (with
    /// `--direct` every host is probed directly).
    public struct Route: Encodable, Sendable, Equatable {
        /// `direct` (a probe from this machine), `proxy` (through the route's hops) or `none` (a
        /// host refused for its names or its route: nothing is run for it).
        public var probe: String
        /// The inventory's `ProxyJump` / `ProxyCommand`, when `ssh` goes through one.
        public var proxy: String?

        enum CodingKeys: String, CodingKey { case probe, proxy }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(probe, forKey: .probe)
            try c.encode(proxy, forKey: .proxy)
        }
    }

    public struct Host: Encodable, Sendable, Equatable {
        public var name: String
        public var host: String
        public var port: Int
        public var user: String?
        public var groups: [String]
        /// The name `ssh` looks the host up under in known_hosts.
        public var knownHostsName: String
        public var knownHostsFiles: [String]
        public var route: Route
        /// `address:port` as the scan table prints it (the table's; the document has host and port).
        public var endpoint: String

        enum CodingKeys: String, CodingKey {
            case name, host, port, user, groups, route
            case knownHostsName = "known_hosts_name", knownHostsFiles = "known_hosts_files"
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(name, forKey: .name); try c.encode(host, forKey: .host); try c.encode(port, forKey: .port)
            try c.encode(user, forKey: .user); try c.encode(groups, forKey: .groups)
            try c.encode(knownHostsName, forKey: .knownHostsName); try c.encode(knownHostsFiles, forKey: .knownHostsFiles)
            try c.encode(route, forKey: .route)
        }
    }

    public struct Summary: Encodable, Sendable, Equatable {
        public var total: Int
        /// Hosts that would be probed (the others have route `none`).
        public var probed: Int
        public var knownHostsLines: Int
        public var exitStatus: Int32

        enum CodingKeys: String, CodingKey {
            case total, probed, knownHostsLines = "known_hosts_lines", exitStatus = "exit_status"
        }
    }

    public var version = ScanPlan.currentVersion
    public var dryRun = true
    public var knownHostsFiles: [String]
    public var pinFiles: [String]
    public var hosts: [Host]
    public var skipped: [SkippedInventoryEntry]
    public var summary: Summary
    /// How many distinct known_hosts files were read (the table says it; not in the document).
    public var knownHostsFilesRead: Int

    enum CodingKeys: String, CodingKey {
        case version, hosts, skipped, summary
        case dryRun = "dry_run", knownHostsFiles = "known_hosts_files", pinFiles = "pin_files"
    }

    /// The plan for `hosts` under `judge` (whose files are already read). Skipped entries make
    /// the exit status 1, as they do for a scan.
    public init(hosts: [InventoryHost], judge: FleetJudge, knownHostsFiles: [String], pinFiles: [String],
                skipped: [SkippedInventoryEntry]) {
        let clean = { (text: String) in CleanText(text, limit: 1024).value }
        self.knownHostsFiles = knownHostsFiles.map(clean)
        self.pinFiles = pinFiles.map(clean)
        self.hosts = hosts.map { host in
            let labels = HostLabels(host)
            return Host(name: labels.name.value, host: labels.address.value, port: host.port, user: labels.user?.value,
                        groups: labels.groups.map(\.value),
                        knownHostsName: CleanText(judge.target(for: host, peer: nil).lookup.hostString, limit: 300).value,
                        knownHostsFiles: judge.knownHosts.paths(for: host).map(clean),
                        route: Route(probe: host.refusal != nil ? "none" : host.route.isDirect ? "direct" : "proxy", proxy: Self.proxyText(host.routing).map { CleanText($0, limit: 300).value }),
                        endpoint: labels.endpoint.value)
        }
        self.skipped = skipped
        let lines = judge.knownHosts.sets.values.flatMap(\.files).reduce(into: [String: Int]()) { $0[$1.path] = $1.lines.count }
            .values.reduce(0, +)
        knownHostsFilesRead = Set(judge.knownHosts.sets.values.flatMap(\.files).map(\.path)).count
        summary = Summary(total: hosts.count, probed: hosts.count { $0.refusal == nil }, knownHostsLines: lines,
                          exitStatus: ExitStatusRule.run(hosts: 0, skipped: !skipped.isEmpty))
    }

    /// The proxy setting as the plan shows it: the route's, or the one that does not parse, as written.
    private static func proxyText(_ routing: Result<HostRoute, RouteError>) -> String? {
        switch routing {
        case .success(let route): return route.proxyDirective
        case .failure(let error): return "\(error.setting) \(error.value)"
        }
    }

    public func encoded() throws -> Data {
        try ReportJSON.encode(self)
    }

    /// `--dry-run`'s output in `format` (the plan document, or one line and the skipped
    /// entries for people); nil for a format that has no plan.
    public func rendered(as format: ScanFormat) throws -> Data? {
        switch format {
        case .json:
            return try encoded() + Data("\n".utf8)
        case .table:
            let probed = summary.probed, lines = summary.knownHostsLines, files = knownHostsFilesRead
            let text = hostLines() + "would probe \(Counted.of(probed, "host"))"
                + (probed < hosts.count ? " (\(hosts.count - probed) refused)" : "") + "; "
                + "\(Counted.of(lines, "known_hosts line")) read from \(Counted.of(files, "file"))\n"
            return Data((text + ScanTable.skippedLines(skipped)).utf8)
        case .knownHosts, .prometheus, .sshfp:
            return nil
        }
    }

    /// One aligned line per host for people: name, endpoint, the name known_hosts is searched
    /// under, and the route (`refused`: nothing would be run for it).
    private func hostLines() -> String {
        let rows = hosts.map { host in
            [host.name, host.endpoint, "as " + host.knownHostsName,
             host.route.probe == "none" ? "refused" : host.route.proxy.map { "via " + $0 } ?? host.route.probe]
        }
        let widths = (0..<3).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            (0..<3).map { row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  ") + "  " + row[3] + "\n"
        }.joined()
    }
}
