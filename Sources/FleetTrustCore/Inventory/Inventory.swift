import Foundation

/// The bytes of one inventory and the name to report it under (a path, or `-` / `<stdin>`).
public struct InventorySource: Sendable {
    public var name: String
    public var bytes: [UInt8]

    public init(name: String, bytes: [UInt8]) {
        self.name = name
        self.bytes = bytes
    }

    public init(name: String, contents: String) {
        self.init(name: name, bytes: Array(contents.utf8))
    }
}

/// Limits and locations the readers need from outside the file itself.
public struct InventoryReadOptions: Sendable {
    /// Expands `~` in ssh_config `Include` and `UserKnownHostsFile`.
    public var homeDirectory: String
    /// Where relative ssh_config `Include` paths point (OpenSSH: `~/.ssh` for user configs).
    public var includeDirectory: String
    /// The local user name, for `%u` in `UserKnownHostsFile`.
    public var localUser: String
    /// Most hosts one range pattern may expand to.
    public var maxHostsPerRange = 100_000
    /// Most hosts one load may produce in all.
    public var maxHosts = 1_000_000
    /// Longest line read; longer ones are reported and skipped.
    public var maxLineLength = 65_536
    /// Whether ssh_config `Include` reads other files; off where the input alone must decide (fuzzing).
    public var followIncludes = true
    /// The user's ssh configuration, applied to hosts of the formats that are not an ssh_config.
    public var sshConfiguration: SSHUserConfiguration?
    /// Whether a ProxyCommand written in an inventory may be run (`--allow-inventory-proxy-command`);
    /// without it such a host is refused, since an inventory is data.
    public var allowInventoryProxyCommands = false
    /// The system resolver, for `CanonicalizeHostname`; without one a host under it is `unchecked`.
    public var hostNameResolver: (any HostNameResolving)?
    /// Runs `Match exec` commands of the user's own configuration; without one such a block makes
    /// the host `unchecked`.
    public var matchExecRunner: MatchExecRunner?

    /// Defaults come from the password database, as OpenSSH takes them (not from `$HOME`).
    public init(homeDirectory: String? = nil, includeDirectory: String? = nil, localUser: String? = nil) {
        let account = getpwuid(getuid())
        let home = homeDirectory ?? account.map { String(cString: $0.pointee.pw_dir) } ?? NSHomeDirectory()
        self.homeDirectory = home
        self.includeDirectory = includeDirectory ?? home + "/.ssh"
        self.localUser = localUser ?? account.map { String(cString: $0.pointee.pw_name) } ?? NSUserName()
    }
}

/// The hosts read from one or more inventory files, with every problem found on the way.
///
/// Reading never stops at the first problem and never throws: a sysadmin gets all the hosts that
/// could be read plus a `file:line` diagnostic for each problem, and decides from `errors` and
/// `skipped` whether to go on.
public struct Inventory: Sendable {
    public var hosts: [InventoryHost]
    public var diagnostics: [InventoryDiagnostic]
    /// Host entries (or range patterns) that could not be read and were left out.
    public var skipped: Int

    public init(hosts: [InventoryHost] = [], diagnostics: [InventoryDiagnostic] = [], skipped: Int = 0) {
        self.hosts = hosts
        self.diagnostics = diagnostics
        self.skipped = skipped
    }

    public var errors: [InventoryDiagnostic] {
        diagnostics.filter { $0.severity == .error }
    }

    /// Every group named by some host, directly or through children, in first-seen order.
    public var groupNames: [String] {
        var seen = Set<String>()
        return hosts.flatMap { $0.groups + $0.inheritedGroups }.filter { seen.insert($0).inserted }
    }

    public func hosts(inGroup group: String) -> [InventoryHost] {
        hosts.hosts(inGroup: group)
    }

    /// Reads one source; `format` overrides detection.
    public static func read(_ source: InventorySource, format: InventoryFormat? = nil,
                            options: InventoryReadOptions = InventoryReadOptions()) -> Inventory {
        let contents = String(decoding: source.bytes, as: UTF8.self)
        var log = DiagnosticLog(file: source.name)
        let hosts: [InventoryHost]
        let chosen = format ?? InventoryFormat.detect(contents)
        switch chosen {
        case .plain: hosts = PlainListReader.read(contents, options: options, log: &log)
        case .ansibleINI: hosts = AnsibleINIReader.read(contents, options: options, log: &log)
        case .ansibleYAML: hosts = AnsibleYAMLReader.read(contents, options: options, log: &log)
        case .sshConfig: hosts = SSHConfigReader.read(contents, options: options, log: &log)
        case .ansibleJSON: hosts = AnsibleInventoryJSONReader.read(contents, options: options, log: &log, detected: format == nil)
        }
        var diagnostics = log.diagnostics
        if format == nil, let first = diagnostics.firstIndex(where: { $0.severity == .error }) {
            // A guessed format is named where it explains the errors (a plain list whose first line
            // looks like YAML is read as YAML).
            diagnostics.insert(InventoryDiagnostic(.warning, SourceLocation(file: source.name, line: diagnostics[first].location.line),
                                                   "read as \(chosen.label) (detected from its content; "
                                                   + "--inventory-format plain, ini, yaml, json or ssh-config chooses)"), at: first)
        }
        var inventory = Inventory(diagnostics: diagnostics, skipped: log.skipped)
        inventory.merge(hosts, options: options)
        return inventory
    }

    /// Reads several sources in order into one inventory; a host named in several is listed once.
    public static func read(_ sources: [InventorySource], format: InventoryFormat? = nil,
                            options: InventoryReadOptions = InventoryReadOptions()) -> Inventory {
        var result = Inventory()
        for source in sources {
            result.append(read(source, format: format, options: options), options: options)
        }
        return result
    }

    /// Adds another inventory's hosts and diagnostics, as `read` does for each of several sources.
    public mutating func append(_ other: Inventory, options: InventoryReadOptions = InventoryReadOptions()) {
        diagnostics += other.diagnostics
        skipped += other.skipped
        merge(other.hosts, options: options)
    }

    /// Adds hosts, folding a repeated name into one row (groups are united). Two definitions that
    /// reach different servers (address, port, user or `HostKeyAlias`) refuse the run with both
    /// places: keeping either would leave the other server unjudged without a word in the results.
    private mutating func merge(_ incoming: [InventoryHost], options: InventoryReadOptions) {
        // The usual case, one source whose names are all different: its list is taken as it is,
        // not copied (100,000 hosts are 20 MB).
        if hosts.isEmpty, incoming.count <= options.maxHosts, Set(incoming.lazy.map(\.name)).count == incoming.count {
            hosts = incoming
            return
        }
        var index = Dictionary(hosts.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        // Sized once: a 100,000-host list grown by doubling would hold its old and new copies at once.
        hosts.reserveCapacity(min(hosts.count + incoming.count, options.maxHosts))
        for (position, host) in incoming.enumerated() {
            guard let existing = index[host.name] else {
                guard hosts.count < options.maxHosts else {
                    if let location = host.source {
                        diagnostics.append(InventoryDiagnostic(.error, location,
                            "more than \(options.maxHosts) hosts in all; the rest are skipped"))
                    }
                    skipped += incoming.count - position
                    return
                }
                index[host.name] = hosts.count
                hosts.append(host)
                continue
            }
            var first = hosts[existing]
            for group in host.groups where !first.groups.contains(group) { first.groups.append(group) }
            for group in host.inheritedGroups where !first.inheritedGroups.contains(group) { first.inheritedGroups.append(group) }
            if (first.address, first.port, first.user, first.hostKeyAlias) != (host.address, host.port, host.user, host.hostKeyAlias),
               let location = host.source ?? first.source {
                let otherPlace = first.source.map { " at \($0)" } ?? ""
                diagnostics.append(InventoryDiagnostic(.refusal, location,
                    "\(InventoryDiagnostic.quote(host.name)) is defined here (\(Self.connection(host))) and\(otherPlace) (\(Self.connection(first))); "
                    + "fleettrust will not judge one and drop the other: rename or remove one"))
            }
            hosts[existing] = first
        }
    }

    /// How a duplicate's definition connects, for the refusal naming both.
    private static func connection(_ host: InventoryHost) -> String {
        var text = "\(host.user.map { "\($0)@" } ?? "")\(host.address) port \(host.port)"
        if let alias = host.hostKeyAlias { text += ", HostKeyAlias \(alias)" }
        return InventoryDiagnostic.quote(text)
    }
}
