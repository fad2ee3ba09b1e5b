/// The answer for one presented key: OpenSSH's closed set of `hostfile.c` (what
/// `KnownHostsJudge` returns), plus what the judge of a whole host adds about a key.
public enum KeyVerdict: String, Sendable, Codable, CaseIterable {
    case trusted
    case trustedByCA = "trusted-by-ca"
    case new
    case changed
    case revoked
    case ipMismatch = "ip-mismatch"
    /// Not the key `ssh` meets, and nothing of its type is recorded while other types are: a key
    /// `ssh` would never be asked about today, so it is neither trusted nor an alarm.
    case notRecorded = "not-recorded"
    /// A certificate OpenSSH would not even read as a key: its CA signature does not verify, it
    /// cannot be decoded, or it is not a host certificate. Always an alarm.
    case invalidCertificate = "invalid-certificate"

    /// Whether this answer alone is an alarm (a different, revoked or forged key).
    public var isAlarm: Bool {
        switch self {
        case .changed, .revoked, .ipMismatch, .invalidCertificate: return true
        case .trusted, .trustedByCA, .new, .notRecorded: return false
        }
    }

    public var isTrusted: Bool { self == .trusted || self == .trustedByCA }
}

/// What the team's pin set says, about a host and about each of its keys.
public enum PinVerdict: String, Sendable, Codable, CaseIterable {
    /// No pin applies to this host.
    case unpinned
    /// The key matches a pin in force (for a host: one of its keys does).
    case matched
    /// Pins apply and none of the host's keys matches.
    case mismatch
    /// Pins applied once but all have expired; they no longer bind.
    case expired
    /// A mismatch reported only (`--pins-mode report`), not enforced.
    case reportedMismatch = "reported-mismatch"
    /// For one key: pins apply to the host and another of its keys matched, not this one.
    case notListed = "not-listed"
}

/// A host's overall state: one value, computed by `FleetJudge` from the facts of a `JudgedHost`
/// by the precedence its `status` documents, and shown by every output.
public enum HostStatus: String, Sendable, Codable, CaseIterable {
    case pending
    case trusted
    case new
    case changed
    /// Another scanner proved other keys for the same host, or another row of the scan under the
    /// same known_hosts name proved other keys of one type (see `SplitViewWitness`).
    case splitView = "split-view"
    case revoked
    case pinMismatch = "pin-mismatch"
    /// A presented certificate is forged, undecodable or not a host certificate.
    case invalidCertificate = "invalid-certificate"
    /// The host's policy requires a pin and none applies.
    case unpinned
    /// The host's policy is `off`: nothing was checked (unsafe by design, never trusted).
    case unchecked
    case unreachable
    case error
    /// known_hosts records keys `ssh` would compare against, and the probe could not prove the key
    /// `ssh` would meet after the server answered: `ssh` may well say CHANGED (see `UnprovedKeyRule`).
    case unverified
    /// TLS: the chain leads to no trusted CA (self-signed, or an unknown CA).
    case untrusted
    /// TLS: the leaf or a certificate in the chain is outside its validity period.
    case expired
    /// TLS: the leaf does not name the endpoint (SAN DNS/IP; CN only without SAN).
    case nameMismatch = "name-mismatch"

    /// Whether a person should look at this host.
    public var needsAttention: Bool { self != .pending && self != .trusted }

    /// How loud the status is: 0 nothing to do, 1 look at it, 2 alarm. The exit status of
    /// `scan` is the loudest level among its hosts.
    public var alarmLevel: Int32 {
        switch self {
        case .pending, .trusted: return 0
        case .new, .unreachable, .error, .unpinned, .unchecked, .untrusted, .expired: return 1
        case .changed, .revoked, .pinMismatch, .invalidCertificate, .nameMismatch, .splitView, .unverified: return 2
        }
    }
}
