/// What the history store remembers about the hosts of one run, read once before the run judges
/// anything: the judge's input for drift, a value like the known_hosts files.
///
/// Times are milliseconds since the epoch (UTC). Sightings are ordered by their store id, which
/// grows with every commit, so two sightings in the same millisecond still have an order.
public struct FleetHistory: Hashable, Sendable {
    /// By the name `ssh` looks the host up under (`InventoryHost.historyKey`). A host missing here
    /// has never been seen: its drift is `first-scan`.
    public var hosts: [String: HostHistory]

    public init(hosts: [String: HostHistory] = [:]) {
        self.hosts = hosts
    }
}

/// One key as the history identifies it: its type name as presented (a certificate type is its
/// own type) and the SHA256 fingerprint of the key (of the certified key, for a certificate, so a
/// re-signed certificate is not a new key).
public struct KeyIdentity: Hashable, Sendable, Comparable {
    public var type: String
    public var fingerprint: String

    public init(type: String, fingerprint: String) {
        self.type = type
        self.fingerprint = fingerprint
    }

    public static func < (a: KeyIdentity, b: KeyIdentity) -> Bool {
        (a.type, a.fingerprint) < (b.type, b.fingerprint)
    }
}

/// Everything the store holds about one key of one host.
public struct KeyHistory: Hashable, Sendable {
    public var key: KeyIdentity
    public var firstSeen: UInt64
    public var lastSeen: UInt64
    /// Store id of the latest sighting presenting it: which key of a type was presented last.
    public var lastSighting: Int64
    /// How many recorded probes presented it.
    public var sightings: Int

    public init(key: KeyIdentity, firstSeen: UInt64, lastSeen: UInt64, lastSighting: Int64, sightings: Int) {
        self.key = key
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.lastSighting = lastSighting
        self.sightings = sightings
    }
}

/// A host's remembered keys and its latest recorded probe.
public struct HostHistory: Hashable, Sendable {
    /// Every key the host has presented, each once.
    public var keys: [KeyHistory]
    /// The keys the latest recorded probe presented.
    public var latest: Set<KeyIdentity>
    /// Whether that probe fetched every key it asked for (a partial probe does not prove a type gone).
    public var latestComplete: Bool

    public init(keys: [KeyHistory], latest: Set<KeyIdentity>, latestComplete: Bool) {
        self.keys = keys
        self.latest = latest
        self.latestComplete = latestComplete
    }

    /// The key of this type presented most recently.
    func latestKey(ofType type: String) -> KeyHistory? {
        keys.filter { $0.key.type == type }.max { $0.lastSighting < $1.lastSighting }
    }
}

/// What one probe of one host presented, as the store records it.
public struct HistorySighting: Hashable, Sendable {
    public enum Source: String, Hashable, Sendable {
        case scan, dashboard
    }

    /// The inventory name, for timelines.
    public var host: String
    /// The name `ssh` looks the host up under: what drift is judged by.
    public var lookup: String
    /// `address:port` as probed.
    public var endpoint: String
    /// Milliseconds since the epoch.
    public var seenAt: UInt64
    public var source: Source
    public var keys: [KeyIdentity]
    /// Whether the probe fetched every key it asked for.
    public var complete: Bool

    public init(host: String, lookup: String? = nil, endpoint: String, seenAt: UInt64, source: Source, keys: [KeyIdentity], complete: Bool) {
        self.host = host
        self.lookup = lookup ?? HistorySchema.lookupName(ofEndpoint: endpoint)
        self.endpoint = endpoint
        self.seenAt = seenAt
        self.source = source
        self.keys = keys
        self.complete = complete
    }

    /// What a judged host's probe presented; nil when it proved no key (nothing to remember).
    public init?(_ judged: JudgedHost, source: Source, seenAt: UInt64) {
        let keys = judged.keys.compactMap { $0.key.map { KeyIdentity(type: $0.type, fingerprint: $0.sha256Fingerprint) } }
        guard !keys.isEmpty else { return nil }
        self.init(host: judged.host.name, lookup: judged.host.historyKey, endpoint: judged.labels.endpoint.value, seenAt: seenAt, source: source,
                  keys: Array(Set(keys)).sorted(), complete: judged.probe.failures.isEmpty)
    }
}

extension InventoryHost {
    /// What the history remembers the host by: the name `ssh` looks it up under (`[host]:port`
    /// after HostName and HostKeyAlias), so one inventory name at two endpoints is two histories.
    public var historyKey: String { LookupName(host: address, port: port, hostKeyAlias: hostKeyAlias).hostString }
}
