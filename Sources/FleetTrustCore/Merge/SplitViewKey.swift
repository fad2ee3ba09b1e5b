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

    /// Two views of one host disagree when they come from different scanners and their proved
    /// fingerprint sets differ (a scanner that proved nothing though the server answered it is
    /// the empty set; one that reached nothing is no view at all, and two empty sets agree).
    public static func disagree<Keys: Equatable>(_ one: (scanner: String, keys: Keys), _ other: (scanner: String, keys: Keys)) -> Bool {
        one.scanner != other.scanner && one.keys != other.keys
    }
}
