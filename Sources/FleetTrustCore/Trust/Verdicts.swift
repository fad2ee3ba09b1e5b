/// OpenSSH's answer for one presented key (the closed set of `hostfile.c`, plus `ip-mismatch`).
public enum KeyVerdict: String, Sendable, Codable, CaseIterable {
    case trusted
    case trustedByCA = "trusted-by-ca"
    case new
    case changed
    case revoked
    case ipMismatch = "ip-mismatch"
}

/// What the team's pin set says about a presented key.
public enum PinVerdict: String, Sendable, Codable, CaseIterable {
    /// No pin applies to this host.
    case unpinned
    /// The key matches a pin in force.
    case matched
    /// Pins apply and none matches.
    case mismatch
    /// Pins applied once but all have expired; they no longer bind.
    case expired
    /// A mismatch reported only (`--pins-mode report`), not enforced.
    case reportedMismatch = "reported-mismatch"
}

/// A host's overall state, as the dashboard row and `scan --format json` show it.
public enum HostStatus: String, Sendable, Codable, CaseIterable {
    case pending
    case trusted
    case new
    case changed
    case revoked
    case pinMismatch = "pin-mismatch"
    case unreachable
    case error

    /// Whether a person should look at this host.
    public var needsAttention: Bool {
        switch self {
        case .changed, .revoked, .pinMismatch, .unreachable, .error, .new: return true
        case .pending, .trusted: return false
        }
    }
}
