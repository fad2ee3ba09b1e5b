import Foundation

/// A host's key timeline as `fleettrust history` prints it: for each key type, the periods during
/// which it presented one key, in the order they began. A key that comes back after another
/// starts a new period, so a reverted key is visible as two periods with another between them.
public struct HostTimeline: Hashable, Sendable, Encodable {
    public struct Period: Hashable, Sendable, Encodable {
        public var type: String
        public var fingerprint: String
        public var firstSeen: String
        public var lastSeen: String
        /// Recorded probes in the period.
        public var sightings: Int
        /// Whether this key had been seen before, then replaced, before this period (`reverted`).
        public var returned: Bool
        /// Whether this is the latest period of its type.
        public var current: Bool

        var key: KeyIdentity { KeyIdentity(type: type, fingerprint: fingerprint) }

        enum CodingKeys: String, CodingKey {
            case type, fingerprint, sightings, returned, current
            case firstSeen = "first_seen", lastSeen = "last_seen"
        }
    }

    public var host: CleanText
    public var endpoints: [CleanText]
    /// Recorded probes in the window.
    public var scans: Int
    public var periods: [Period]

    public init(host: String, sightings: [StoredSighting]) {
        self.host = CleanText(host)
        var endpoints: [CleanText] = []
        for sighting in sightings where !endpoints.contains(sighting.endpoint) { endpoints.append(sighting.endpoint) }
        self.endpoints = endpoints
        self.scans = sightings.count
        struct Open { var index: Int; var fingerprint: String }
        var periods: [(period: Period, first: UInt64, last: UInt64)] = []
        var open: [String: Open] = [:]
        var seen: [String: Set<String>] = [:]
        for sighting in sightings {
            for key in sighting.keys {
                if let current = open[key.type], current.fingerprint == key.fingerprint {
                    periods[current.index].last = sighting.seenAt
                    periods[current.index].period.sightings += 1
                    continue
                }
                let returned = seen[key.type, default: []].contains(key.fingerprint)
                seen[key.type, default: []].insert(key.fingerprint)
                open[key.type] = Open(index: periods.count, fingerprint: key.fingerprint)
                periods.append((Period(type: key.type, fingerprint: key.fingerprint, firstSeen: "", lastSeen: "", sightings: 1,
                                       returned: returned, current: false), sighting.seenAt, sighting.seenAt))
            }
        }
        let latest = Set(sightings.last?.keys ?? [])
        for current in open.values where latest.contains(periods[current.index].period.key) {
            periods[current.index].period.current = true
        }
        self.periods = periods.map { entry in
            var period = entry.period
            period.firstSeen = HistoryTime.rfc3339(entry.first)
            period.lastSeen = HistoryTime.rfc3339(entry.last)
            return period
        }
    }

    /// The table for people: one line per period.
    public func table() -> String {
        var lines = ["history of \(host) (\(endpoints.map(\.value).joined(separator: ", "))): "
                     + "\(Counted.of(scans, "recorded probe"))"]
        let typeWidth = max(4, periods.map(\.type.count).max() ?? 0)
        lines.append("TYPE".padding(toLength: typeWidth, withPad: " ", startingAt: 0)
                     + "  FINGERPRINT                                          FIRST SEEN            LAST SEEN             SCANS  NOTE")
        for period in periods {
            let note = [period.returned ? "REVERTED (seen before, then replaced)" : nil, period.current ? "current" : nil]
                .compactMap { $0 }.joined(separator: ", ")
            lines.append(CleanText(period.type).value.padding(toLength: typeWidth, withPad: " ", startingAt: 0) + "  "
                         + CleanText(period.fingerprint).value.padding(toLength: 51, withPad: " ", startingAt: 0) + "  "
                         + period.firstSeen + "  " + period.lastSeen + "  "
                         + (String(period.sightings).padding(toLength: 5, withPad: " ", startingAt: 0) + "  " + note)
                            .trimmingCharacters(in: .whitespaces))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
