/// What the probe's one connection shaped like `ssh`'s came to: the key it proved, or why not.
///
/// A server, or a relay in front of it, can tell clients apart before it commits to a host key:
/// by when the client sends its KEXINIT and by what it lists. One connection per host sends what
/// `ssh` sends for that host, when `ssh` sends it, so it is shown what `ssh` is shown: its key,
/// not one inferred from the keys the other connections collected, is the key `ssh` meets, and
/// when it failed after the server answered, that key is unproved.
public enum SSHConnectionOutcome: Hashable, Sendable {
    case proved(DiscoveredKey)
    case failed(ProbeFailure)

    public var failure: ProbeFailure? {
        if case .failed(let failure) = self { failure } else { nil }
    }
}
