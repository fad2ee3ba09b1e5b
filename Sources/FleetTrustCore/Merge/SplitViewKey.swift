/// Which entries from different scanners are the same host, and when two of them disagree: the
/// one answer `merge` (over the reports' entries) and replay (over the recorded probes) both use,
/// so a pair one raises the other raises too.
///
/// A host is what `ssh` would meet: its inventory name and port, and equally the string `ssh`
/// looks it up under in known_hosts (`[host]:port`, or its `HostKeyAlias`), the line a save
/// writes. A report spelling the name otherwise ("WEB1", another alias of the address) must not
/// step out of the comparison. Two entries sharing any one key are one host.
public enum SplitViewKey: Hashable, Sendable {
    /// The inventory name and port.
    case inventory(name: String, port: Int)
    /// The known_hosts lookup string.
    case lookup(String)

    /// Every key an entry is grouped under.
    public static func keys(name: String, host: String, port: Int, hostKeyAlias: String?) -> [SplitViewKey] {
        [.inventory(name: name, port: port), .lookup(LookupName(host: host, port: port, hostKeyAlias: hostKeyAlias).hostString)]
    }

    /// What one entry shows the comparison: the keys it proved and, when it proved none, the
    /// failure of a server that answered it (a `gap`); neither for an entry that reached nothing.
    /// An SSH entry shows its keys' SHA-256 fingerprints (a certificate by the key it certifies);
    /// a TLS endpoint its leaf certificate's key (`pin-sha256:…`, whichever CA signed it), and
    /// as a gap a server that answered but whose STARTTLS upgrade or handshake failed (a network
    /// stripping STARTTLS looks exactly like that). A handshake that timed out is no view, as an
    /// SSH server that never sent its banner. A host-key failure is judged, not probed: no gap.
    public static func view(endpoint: EndpointProtocol, fingerprints: [String], leaf: [UInt8]?, failure: ProbeFailure?)
        -> (keys: [String], gap: ProbeFailure?) {
        switch endpoint {
        case .tls:
            if let leaf, let certificate = try? TLSCertificate(der: leaf) { return ([certificate.pin], nil) }
            guard let failure, failure.stage == .tlsHandshake, failure.code != .tlsTimeout, failure.code != .startTLSTimeout else { return ([], nil) }
            return ([], failure)
        case .ssh:
            let keys = Set(fingerprints).sorted()
            guard keys.isEmpty, let failure, failure.stage != .hostKey else { return (keys, nil) }
            return ([], UnprovedKeyRule.answered(failure))
        }
    }

    /// Two views of one host disagree when they come from different scanners and their proved
    /// fingerprint sets differ (a scanner that proved nothing though the server answered it is
    /// the empty set; one that reached nothing is no view at all, and two empty sets agree).
    public static func disagree<Keys: Equatable>(_ one: (scanner: String, keys: Keys), _ other: (scanner: String, keys: Keys)) -> Bool {
        one.scanner != other.scanner && one.keys != other.keys
    }
}
