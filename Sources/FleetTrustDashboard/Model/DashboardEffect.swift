import FleetTrustCore

/// What `update` asks the outside world to do; the driver performs it with injected services and
/// answers with messages. Keeping writes here keeps `update` pure and makes `--read-only` total.
public enum DashboardEffect: Equatable, Sendable {
    /// Probe these hosts (indices into the inventory) again.
    case probe([Int])
    case write(Decision)
    case connect(Int)
    case quit
}

/// A user's decision that changes a trust store, with everything the writer and the audit log need.
public struct Decision: Equatable, Sendable {
    public enum Kind: String, Equatable, Sendable {
        case trust, replace, pin, forget
    }

    public var kind: Kind
    public var items: [DecisionItem]
    /// For a forget: the alarm the host was in when the person decided (changed, revoked, …), so
    /// the audit log records the forgetting of a key in dispute as that, not as routine clean-up.
    public var alarm: HostStatus?

    public init(kind: Kind, items: [DecisionItem], alarm: HostStatus? = nil) {
        self.kind = kind
        self.items = items
        self.alarm = alarm
    }
}

public struct DecisionItem: Equatable, Sendable {
    public var index: Int
    public var host: InventoryHost
    /// The names the entry is written under (trust, replace) or removed for (forget).
    public var names: [String]
    /// The presented keys being trusted or pinned.
    public var keys: [HostKey]
    /// Recorded lines being superseded (replace) or removed (forget).
    public var previous: [RecordedLine]
    /// Forget: recorded lines for the host that forget leaves, each for its `keptByForget` reason.
    public var kept: [RecordedLine] = []
    /// Trust: proved keys left out, since only a pin could vouch for them (`FirstUseKeys`).
    public var withheld: [HostKey] = []
    /// The file written.
    public var file: String
    /// Every recorded line for the host the person was shown when deciding: a write is refused
    /// if the file no longer records exactly these keys for the names (compare-and-set).
    public var seen: [RecordedLine]
    /// The pinned fingerprints that applied to the host when the person decided: a pin write is
    /// refused if the pin file no longer pins exactly these for the host (compare-and-set).
    public var shownPins: Set<String>
    /// For a TLS endpoint: the leaf's SPKI pin (base64) being pinned, and the leaf's SHA-256
    /// fingerprint shown next to it.
    public var spkiPins: [String] = []
    public var certificateFingerprint: String?
    /// Replay: where the keys come from (`the recording FILE, scanned from SCANNER`), since no
    /// connection from this machine proved them; the dialog and the audit record say so.
    public var recordedFrom: String?

    public init(index: Int, host: InventoryHost, names: [String], keys: [HostKey], previous: [RecordedLine],
                file: String, seen: [RecordedLine] = [], shownPins: Set<String> = []) {
        self.index = index
        self.host = host
        self.names = names
        self.keys = keys
        self.previous = previous
        self.file = file
        self.seen = seen
        self.shownPins = shownPins
    }
}
