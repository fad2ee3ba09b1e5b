/// `fleettrust history HOST [--since WHEN]` answered from the store: the host's timeline, or one
/// sentence saying why there is none (a bad `--since`, no recorded probe, several inventory
/// names behind one address).
public struct HostTimelineLookup: Sendable {
    public struct Problem: Error, CustomStringConvertible {
        public var description: String
    }

    /// The inventory name, or the address:port it was probed at.
    public var host: String
    public var since: String?
    /// The history database.
    public var path: String

    public init(host: String, since: String?, path: String) {
        self.host = host
        self.since = since
        self.path = path
    }

    /// `--since` as milliseconds since the epoch (0 without it).
    public func start(now: UInt64) throws(Problem) -> UInt64 {
        guard let since else { return 0 }
        guard let parsed = HistoryTime.since(since, now: now) else {
            throw Problem(description: "--since \(CleanText(since, limit: 64)): not a duration (90s, 45m, 12h, 30d, 2w), a date (2026-11-01) or an RFC 3339 time")
        }
        return parsed
    }

    /// Reads the sightings (blocking: run it off Swift's cooperative pool) and makes the timeline.
    public func timeline(now: UInt64) throws -> HostTimeline {
        let start = try start(now: now)
        let sightings: [StoredSighting]
        do {
            sightings = try HistoryStore.open(path: path, readOnly: true)?.sightings(of: host, since: start) ?? []
        } catch {
            throw Problem(description: "\(error)")
        }
        guard !sightings.isEmpty else {
            throw Problem(description: "\(CleanText(host)): no recorded probe in \(path)" + (since.map { " since \(CleanText($0, limit: 64))" } ?? ""))
        }
        let names = Array(Set(sightings.map(\.host.value))).sorted()
        guard names.count == 1 else {
            throw Problem(description: "\(CleanText(host)) was probed under several inventory names (" + names.prefix(5).joined(separator: ", ")
                          + "); give one of them")
        }
        return HostTimeline(host: sightings.last?.host.value ?? host, sightings: sightings)
    }
}
