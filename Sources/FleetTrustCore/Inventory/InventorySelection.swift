/// Which inventory hosts a command works on: the files read (`-` for standard input), the format
/// forced on them, the groups kept, and whether routes are dropped (`--direct`). Every command that
/// takes an inventory selects its hosts here, so `scan`, `sync`, the dashboard and `tidy` agree.
public struct InventorySelection: Sendable {
    public var files: [String]
    /// Overrides format detection.
    public var format: InventoryFormat?
    /// Keep only hosts of these groups (children included); empty: every host.
    public var groups: [String]
    /// Probe every host directly, dropping its ProxyJump or ProxyCommand route.
    public var direct: Bool

    public init(files: [String], format: InventoryFormat? = nil, groups: [String] = [], direct: Bool = false) {
        self.files = files
        self.format = format
        self.groups = groups
        self.direct = direct
    }

    /// Reads every file; the hosts of the groups asked for, in inventory order, each once. The
    /// diagnostics are the whole files', for the caller to report with `skipped`, the sentence
    /// about entries left out for errors (nil when none was).
    public func load(options: InventoryReadOptions) throws(InventoryLoadError) -> (inventory: Inventory, skipped: String?) {
        var inventory = try InventoryLoader(format: format, options: options).loadWaiting(files)
        let refusals = inventory.diagnostics.filter { $0.severity == .refusal }
        guard refusals.isEmpty else { throw .securitySettingsRefused(refusals) }
        let skipped = inventory.skippedSentence
        let known = inventory.groupNames
        let unknown = groups.filter { !known.contains($0) && inventory.hosts(inGroup: $0).isEmpty }
        guard unknown.isEmpty else { throw .unknownGroups(unknown, known: known) }
        inventory.hosts = select(inventory)
        if direct {
            for index in inventory.hosts.indices { inventory.hosts[index].routing = .success(.direct) }
        }
        return (inventory, skipped)
    }

    /// The hosts of `groups` (all when none is asked for), in the inventory's order.
    public func select(_ inventory: Inventory) -> [InventoryHost] {
        guard !groups.isEmpty else { return inventory.hosts }
        let selected = Set(groups.flatMap { inventory.hosts(inGroup: $0) })
        return inventory.hosts.filter { selected.contains($0) }
    }

    /// Why there is nothing to do when no host is selected, in one sentence.
    public var nothingSelected: String {
        "no hosts to check in \(files.joined(separator: ", "))" + (groups.isEmpty ? "" : " (groups: \(groups.joined(separator: ", ")))")
    }
}

extension Inventory {
    /// The sentence saying how many entries were left out for errors; nil when none was.
    public var skippedSentence: String? {
        guard skipped > 0 else { return nil }
        return "skipped \(Counted.of(skipped, "inventory entry", "inventory entries")) with errors; going on with \(Counted.of(hosts.count, "host"))"
    }
}

extension InventoryReadOptions {
    /// Read options carrying the user's ssh configuration (`explicit`, else `~/.ssh/config` and
    /// `/etc/ssh/ssh_config`), whose host-key settings apply to hosts of every inventory that is not
    /// an ssh_config, as the `ssh` the user runs applies them; with the errors `ssh` itself would
    /// refuse the files for (their other lints are not fleettrust's to report).
    public static func underUserConfiguration(explicit: String?, allowProxyCommands: Bool) throws -> (options: InventoryReadOptions, errors: [InventoryDiagnostic]) {
        var options = InventoryReadOptions()
        options.allowInventoryProxyCommands = allowProxyCommands
        let (configuration, diagnostics) = try SSHUserConfiguration.read(files: SSHUserConfiguration.defaultFiles(explicit: explicit, options: options),
                                                                         options: options)
        options.sshConfiguration = configuration
        return (options, diagnostics.filter { $0.severity == .error })
    }
}
