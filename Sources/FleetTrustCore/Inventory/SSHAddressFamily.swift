/// `AddressFamily` as `ssh` 9.2 reads it: which addresses `resolve_host` asks `getaddrinfo` for
/// (its `ai_family`), both when canonicalizing the name and when connecting, so a name whose
/// IPv4 and IPv6 addresses reach different servers meets a different key under each.
public enum SSHAddressFamily: String, Hashable, Sendable, Codable {
    case any, inet, inet6

    /// The keyword's value in any case, as `ssh`'s `multistate_addressfamily` reads it.
    init?(keyword: String) {
        self.init(rawValue: keyword.lowercased())
    }
}
