/// How a host's keys moved since the last recorded probe of it: one more fact of the judged host.
///
/// Drift is information beside the trust status, never instead of it: it does not change
/// `status`, so it can never make an alarm quieter. A `reverted` key raises `scan`'s exit status
/// to 2 (see `ExitStatusRule`).
public enum DriftKind: String, Hashable, Sendable, Codable, CaseIterable {
    /// Every key presented is the one last seen for its type, and no type went away.
    case none
    /// The history has no earlier probe of this host.
    case firstScan = "first-scan"
    /// A key type appeared that the host never presented before (or that came back after a
    /// complete probe without it).
    case added
    /// A key type the last probe saw is gone (the server no longer offers it).
    case removed
    /// A key of a type seen before, never seen before.
    case changed
    /// A key seen before, then replaced by another of its type, is back: a half-done rotation,
    /// or a man in the middle now and then.
    case reverted

    /// Loudest first: which kind names a host when its keys moved in several ways.
    var loudness: Int {
        switch self {
        case .reverted: return 5
        case .changed: return 4
        case .removed: return 3
        case .added: return 2
        case .firstScan: return 1
        case .none: return 0
        }
    }

    /// Whether the keys moved since the last scan (the dashboard's "drifted" filter).
    public var isDrift: Bool { loudness >= 2 }
}

/// When one key was first and last seen, the current probe included.
public struct KeySeen: Hashable, Sendable {
    public var key: KeyIdentity
    /// Milliseconds since the epoch.
    public var firstSeen: UInt64
    public var lastSeen: UInt64
    /// Recorded probes presenting it, the current one included when it does.
    public var sightings: Int
    /// Whether the current probe presented it.
    public var current: Bool
}

/// One type's move: from which key to which (nil: none).
public struct KeyDrift: Hashable, Sendable {
    public var kind: DriftKind
    public var type: String
    public var before: String?
    public var now: String?
}

/// A host's drift: the kind, each type's move, and every key's first and last sighting.
public struct HostDrift: Hashable, Sendable {
    public var kind: DriftKind
    public var moves: [KeyDrift]
    /// Every key the host has presented, oldest first sighting first.
    public var timeline: [KeySeen]

    /// The key's entry in the timeline.
    public func seen(_ key: KeyIdentity) -> KeySeen? { timeline.first { $0.key == key } }

    /// Judges drift, purely: what this probe presented against what the history remembers.
    /// - Parameters:
    ///   - presented: the keys the probe proved.
    ///   - offered: the host-key algorithms the server offered, when known; a type it no longer
    ///     offers is gone. Without them, a type missing from a probe that fetched everything it
    ///     asked for (`complete`) is gone; a partial probe proves no type gone.
    ///   - now: milliseconds since the epoch.
    public static func judge(presented: [KeyIdentity], offered: [String]?, complete: Bool, history: HostHistory?,
                             now: UInt64) -> HostDrift {
        let presentedSet = Set(presented)
        guard let history, !history.keys.isEmpty else {
            return HostDrift(kind: .firstScan, moves: [],
                             timeline: presentedSet.sorted().map { KeySeen(key: $0, firstSeen: now, lastSeen: now, sightings: 1, current: true) })
        }
        var moves: [KeyDrift] = []
        let latestTypes = Set(history.latest.map(\.type))
        for key in presentedSet.sorted() {
            guard let latest = history.latestKey(ofType: key.type) else {
                moves.append(KeyDrift(kind: .added, type: key.type, before: nil, now: key.fingerprint))
                continue
            }
            if latest.key == key {
                if !latestTypes.contains(key.type) && history.latestComplete {
                    moves.append(KeyDrift(kind: .added, type: key.type, before: nil, now: key.fingerprint))
                }
            } else {
                let seenBefore = history.keys.contains { $0.key == key }
                moves.append(KeyDrift(kind: seenBefore ? .reverted : .changed, type: key.type, before: latest.key.fingerprint,
                                      now: key.fingerprint))
            }
        }
        let presentedTypes = Set(presentedSet.map(\.type))
        let offeredTypes = offered.map { Set($0.map(KeyType.canonicalName)) }
        for type in latestTypes.subtracting(presentedTypes).sorted() {
            let gone = offeredTypes.map { !$0.contains(type) } ?? complete
            if gone {
                moves.append(KeyDrift(kind: .removed, type: type, before: history.latestKey(ofType: type)?.key.fingerprint, now: nil))
            }
        }
        var timeline = history.keys.map { remembered in
            KeySeen(key: remembered.key, firstSeen: remembered.firstSeen,
                    lastSeen: presentedSet.contains(remembered.key) ? max(now, remembered.lastSeen) : remembered.lastSeen,
                    sightings: presentedSet.contains(remembered.key) ? remembered.sightings.addingClamped(1) : remembered.sightings,
                    current: presentedSet.contains(remembered.key))
        }
        let remembered = Set(history.keys.map(\.key))
        timeline += presentedSet.subtracting(remembered).sorted().map { KeySeen(key: $0, firstSeen: now, lastSeen: now, sightings: 1, current: true) }
        timeline.sort { ($0.firstSeen, $0.key) < ($1.firstSeen, $1.key) }
        let kind = moves.map(\.kind).max { $0.loudness < $1.loudness } ?? .none
        return HostDrift(kind: kind, moves: moves, timeline: timeline)
    }
}

private extension Int {
    /// `self + other`, held at `Int.max` / `Int.min` instead of trapping: counts from a file.
    func addingClamped(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
