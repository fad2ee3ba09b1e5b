import FleetTrustCore

/// One inventory host as the dashboard holds it: the latest probe and what was concluded.
public struct HostRow: Equatable, Sendable {
    public var host: InventoryHost
    public var result: ProbeResult?
    public var assessment: RowAssessment?
    public var scanning: Bool
    public var marked: Bool

    public init(host: InventoryHost, result: ProbeResult? = nil, assessment: RowAssessment? = nil,
                scanning: Bool = false, marked: Bool = false) {
        self.host = host
        self.result = result
        self.assessment = assessment
        self.scanning = scanning
        self.marked = marked
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
