import FleetTrustCore

/// One inventory host as the dashboard holds it: the latest probe and what was concluded.
public struct HostRow: Equatable, Sendable {
    public var host: InventoryHost { didSet { keys = RowKeys(host) } }
    public var result: ProbeResult?
    public var assessment: RowAssessment?
    public var scanning: Bool
    public var marked: Bool
    /// Filter text and sort keys, computed once per host: a key press at 10,000 hosts must not
    /// lower-case or re-key every row again.
    private(set) var keys: RowKeys

    public init(host: InventoryHost, result: ProbeResult? = nil, assessment: RowAssessment? = nil,
                scanning: Bool = false, marked: Bool = false) {
        self.host = host
        self.result = result
        self.assessment = assessment
        self.scanning = scanning
        self.marked = marked
        self.keys = RowKeys(host)
    }

    public var status: HostStatus { assessment?.status ?? .pending }

    /// The key shown in the list: Ed25519 first, then ECDSA, then RSA, then anything.
    public var primaryKey: HostKey? {
        let keys = result?.keys.map(\.key) ?? []
        let preference: [KeyType] = [.ed25519, .ecdsaP256, .ecdsaP384, .ecdsaP521, .rsa]
        for kind in preference { if let key = keys.first(where: { $0.kind == kind }) { return key } }
        return keys.first
    }

    public var roundTripMilliseconds: Double? {
        result?.keys.compactMap(\.handshakeMilliseconds).min()
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
        case .unreachable: return "U"
        case .error: return "E"
        }
    }

    /// Most urgent first, for sorting by status.
    public var severity: Int {
        switch self {
        case .changed: return 0
        case .revoked: return 1
        case .pinMismatch: return 2
        case .error: return 3
        case .unreachable: return 4
        case .new: return 5
        case .pending: return 6
        case .trusted: return 7
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
        search = Array(([host.name, host.endpointLabel] + host.groups).joined(separator: "\n").lowercased().utf8)
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
