/// One host as the team's inventory names it, and how `ssh` will reach and name it.
///
/// Every inventory reader produces these; the probe pool connects to `address:port`, and the
/// trust engine looks the host up under `knownHostsName` (what `ssh` itself would use).
public struct InventoryHost: Hashable, Sendable {
    /// The name the inventory uses (an Ansible host name, an ssh_config `Host` alias, a plain line).
    public var name: String
    /// Where to connect: `ansible_host`, `HostName`, or the name itself.
    public var address: String
    public var port: Int
    public var user: String?
    public var groups: [String]
    /// `HostKeyAlias` from ssh_config: used verbatim as the known_hosts name, without port.
    public var hostKeyAlias: String?
    /// `UserKnownHostsFile` from ssh_config, when it names files for this host.
    public var userKnownHostsFiles: [String]
    /// Where the host was defined, for messages.
    public var source: SourceLocation?
    /// Groups the host belongs to through `children` (parents of its groups, transitively), not `all`.
    public var inheritedGroups: [String]
    /// The reader that produced this host; decides whether `name` is also a host name ssh might know.
    public var format: InventoryFormat?
    /// How `ssh` reaches the host when not directly, parsed by the reader from what the inventory
    /// says (`ProxyJump bastion`, `ProxyCommand …`), or why that does not parse. A direct probe
    /// could reach another machine than the one `ssh` reaches through the proxy, so a host with
    /// hops is probed only through them (or when the user says it is reachable directly,
    /// `--direct`), and one whose setting does not parse is refused (`refusal`), never probed.
    /// A TLS endpoint of the host inherits it.
    public var routing: Result<HostRoute, RouteError>
    /// Set when the route's ProxyCommand was written in an inventory and running it was not
    /// allowed: the host is refused (`refusal`), nothing is run for it.
    public var proxyCommandNotAllowed = false
    /// The other client settings that change how `ssh` judges this host's key, as its
    /// configuration (ssh_config, or Ansible's ssh arguments) sets them.
    public var sshOptions: SSHHostOptions
    /// The trust policy the inventory names for the host (`fleettrust_policy`); wins over the
    /// policy file.
    public var policy: String?
    /// The policy came from a recorded document (replay), not this machine's inventory: it may
    /// make the host stricter than this machine's own policy, never quieter.
    public var policyIsRecorded = false
    /// What the row is probed and judged as: an SSH host, or a TLS endpoint (`host:port/tls`,
    /// `host:25/smtp`) with the name its certificate must carry and its plain-text upgrade.
    public var endpoint: Endpoint = .ssh

    /// Which protocol the endpoint speaks.
    public var endpointProtocol: EndpointProtocol { endpoint.endpointProtocol }

    /// The hops `ssh` passes to reach the host; none for a direct host, and none for one whose
    /// route does not parse (it is refused before anything follows them).
    public var route: HostRoute { (try? routing.get()) ?? .direct }

    public init(name: String, address: String? = nil, port: Int = 22, user: String? = nil,
                groups: [String] = [], hostKeyAlias: String? = nil,
                userKnownHostsFiles: [String] = [], source: SourceLocation? = nil,
                inheritedGroups: [String] = [], format: InventoryFormat? = nil,
                routing: Result<HostRoute, RouteError> = .success(.direct),
                sshOptions: SSHHostOptions = SSHHostOptions()) {
        self.name = name
        self.address = address ?? name
        self.port = port
        self.user = user
        self.groups = groups
        self.hostKeyAlias = hostKeyAlias
        self.userKnownHostsFiles = userKnownHostsFiles
        self.source = source
        self.inheritedGroups = inheritedGroups
        self.format = format
        self.routing = routing
        self.sshOptions = sshOptions
    }

    /// The ssh_config file this host comes from, which `ssh -F` must read to reach it as the
    /// inventory says (its alias, its hops); nil for other inventories.
    public var sshConfigFile: String? {
        guard format == .sshConfig, let file = source?.file, file != "<stdin>" else { return nil }
        return file
    }

    /// `address:port`, or `[address]:port` for IPv6 literals, for display.
    public var endpointLabel: String {
        address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)"
    }
}

/// A file and 1-based line number, carried by every input error.
public struct SourceLocation: Hashable, Sendable, Codable, CustomStringConvertible {
    public var file: String
    public var line: Int

    public init(file: String, line: Int) {
        self.file = file
        self.line = line
    }

    public var description: String { "\(file):\(line)" }
}
