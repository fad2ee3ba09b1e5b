/// The names under which `ssh` (and so fleettrust) looks a host up in known_hosts.
///
/// Division of work with the trust engine: the inventory decides *which* host string ssh uses
/// (`knownHostsHost`) and whether a port suffix applies (`knownHostsPort`); the trust engine turns
/// that into the final lookup string, including OpenSSH's address canonicalisation (`127.1` →
/// `127.0.0.1`) and `[host]:port` formatting. `knownHostsName` is the plain composition of the two,
/// without canonicalisation, for callers that need no more.
extension InventoryHost {
    /// The host string ssh looks up, before port formatting: the `HostKeyAlias` when set, otherwise
    /// the address (`HostName`, `ansible_host`, or the name), lowercased as `ssh.c` does.
    public var knownHostsHost: String {
        (hostKeyAlias ?? address).lowercased()
    }

    /// The port to format the lookup with, or `nil` when a `HostKeyAlias` is used verbatim (no port).
    public var knownHostsPort: Int? {
        hostKeyAlias == nil ? port : nil
    }

    /// `knownHostsHost`, as `[host]:port` when the port is not 22 (OpenSSH `put_host_port`).
    public var knownHostsName: String {
        guard let port = knownHostsPort, port != 22 else { return knownHostsHost }
        return "[\(knownHostsHost)]:\(port)"
    }

    /// Other host strings an operator may have recorded this host under (the inventory alias, or
    /// the address when a `HostKeyAlias` hides it), before port formatting. Entries found under
    /// these are evidence to show, never a reason to trust: ssh does not look them up.
    public var additionalNames: [String] {
        var names: [String] = []
        let primary = knownHostsHost
        for candidate in [format == .plain ? nil : name, hostKeyAlias == nil ? nil : address] {
            guard let candidate = candidate?.lowercased(), candidate != primary, !names.contains(candidate) else { continue }
            names.append(candidate)
        }
        return names
    }

    /// The inventory name made safe to print (it is untrusted input).
    public var displayName: String {
        Sanitizer.clean(name)
    }

    /// Whether any name of this host holds control characters or invalid UTF-8, which are kept as
    /// data but must never reach a terminal unsanitized.
    public var hasUnsafeText: Bool {
        ([name, address, user ?? "", hostKeyAlias ?? ""] + groups).contains(where: InventoryHost.isUnsafe)
    }

    static func isUnsafe(_ text: String) -> Bool {
        text.unicodeScalars.contains { Sanitizer.isControl($0) || $0 == "\u{FFFD}" }
    }
}

extension Sequence where Element == InventoryHost {
    /// Hosts in `group`, directly or through `children` groups; `all` names every host and
    /// `ungrouped` the hosts without a group.
    public func hosts(inGroup group: String) -> [InventoryHost] {
        filter { host in
            group == "all"
                || host.groups.contains(group)
                || host.inheritedGroups.contains(group)
                || group == "ungrouped" && host.groups.isEmpty
        }
    }
}
