import FleetTrustCore

/// One inventory host as the dashboard holds it: the judgement of its latest probe.
public struct HostRow: Equatable, Sendable {
    public var host: InventoryHost { didSet { keys = RowKeys(host) } }
    /// What the one judge concluded from the latest probe; nil until the host has answered.
    public var judged: JudgedHost?
    public var scanning: Bool
    public var marked: Bool
    /// Filter text and sort keys, computed once per host: a key press at 10,000 hosts must not
    /// lower-case or re-key every row again.
    private(set) var keys: RowKeys

    public init(host: InventoryHost, judged: JudgedHost? = nil, scanning: Bool = false, marked: Bool = false) {
        self.host = host
        self.judged = judged
        self.scanning = scanning
        self.marked = marked
        self.keys = RowKeys(host)
    }

    public var status: HostStatus { judged?.status ?? .pending }

    /// The key shown in the list: the one `ssh` meets, else the first proved.
    public var primaryKey: JudgedKey? { judged?.negotiatedKey ?? judged?.keys.first }

    public var roundTripMilliseconds: Double? {
        judged?.probe.keys.compactMap(\.handshakeMilliseconds).min()
    }
}

extension HostStatus {
    /// One letter per status, so the list reads without colour.
    public var letter: Character {
        switch self {
        case .pending: return "."
        case .trusted: return "T"
        case .new: return "N"
        case .changed: return "C"
        case .revoked: return "R"
        case .pinMismatch: return "P"
        case .invalidCertificate: return "I"
        case .unpinned: return "p"
        case .unchecked: return "!"
        case .unreachable: return "U"
        case .error: return "E"
        case .untrusted: return "u"
        case .expired: return "X"
        case .nameMismatch: return "M"
        case .splitView: return "S"
        case .unverified: return "V"
        }
    }

    /// Most urgent first, for sorting by status.
    public var severity: Int {
        switch self {
        case .revoked: return 0
        case .changed, .splitView, .unverified: return 1
        case .pinMismatch: return 2
        case .invalidCertificate, .nameMismatch: return 3
        case .unchecked: return 4
        case .error: return 5
        case .unreachable, .expired: return 6
        case .unpinned, .untrusted: return 7
        case .new: return 8
        case .pending: return 9
        case .trusted: return 10
        }
    }
}

/// A row's text for the `/` filter and its natural sort keys, as lower-cased bytes.
struct RowKeys: Equatable, Sendable {
    /// Name, endpoint and groups, lower-cased, separated by newlines (which no needle holds).
    var search: [UInt8]
    var name: [UInt8]
    var address: [UInt8]

    init(_ host: InventoryHost) {
        search = Array(([host.name, host.endpointLabel] + host.groups + host.inheritedGroups).joined(separator: "\n").lowercased().utf8)
        name = Array(SortOrder.naturalKey(host.name).utf8)
        address = Array((SortOrder.naturalKey(host.address) + "#" + SortOrder.pad(host.port)).utf8)
    }

    /// Whether the search text contains `needle` (lower-cased bytes).
    func matches(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard needle.count <= search.count, let first = needle.first else { return false }
        var start = 0
        while start + needle.count <= search.count {
            if search[start] == first && search[start..<start + needle.count].elementsEqual(needle) { return true }
            start += 1
        }
        return false
    }
}
