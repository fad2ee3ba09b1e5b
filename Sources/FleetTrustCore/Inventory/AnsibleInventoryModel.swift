/// One inventory variable as written: its text and the line that set it, so that a bad value is
/// reported where it was written (an inventory line, or a line of a `group_vars/` file).
struct InventoryVariable: Equatable {
    var value: String
    var location: SourceLocation?
}

/// The group tree every Ansible reader fills in (INI, YAML, `ansible-inventory --list` JSON, the
/// files of an inventory directory together), and Ansible's rules for turning it into hosts.
///
/// Variables resolve in the order of Ansible's `VariableManager` (lowest first): `all` vars from
/// inventory files; group vars from inventory files, from the shallowest group to the deepest (a
/// child group beats its parent; at equal depth the lower `ansible_group_priority`, then the
/// earlier name, is applied first); `group_vars/all`; `group_vars/` of the host's groups in the
/// same order; host vars from inventory files; `host_vars/`. Connection variables are read as
/// Ansible's ssh connection plugin reads them: of `ansible_host`/`ansible_ssh_host` (likewise
/// `_port`, `_user`) the later-listed `ansible_ssh_*` name wins whenever both are set, whatever
/// level each was set at.
struct AnsibleInventoryModel {
    private struct Group {
        /// Variables the inventory sources set on the group.
        var vars: [String: InventoryVariable] = [:]
        /// Variables from `group_vars/` beside the inventory: a higher layer than `vars`.
        var fileVars: [String: InventoryVariable] = [:]
        var parents: [String] = []
        /// `ansible_group_priority` (default 1).
        var priority = 1
    }

    private struct Host {
        var vars: [String: InventoryVariable] = [:]
        /// Variables from `host_vars/`: the highest layer.
        var fileVars: [String: InventoryVariable] = [:]
        var groups: [String] = []
        var location: SourceLocation
        var format: InventoryFormat
    }

    private var groups: [String: Group] = ["all": Group(), "ungrouped": Group()]
    private var hostOrder: [String] = []
    private var hostTable: [String: Host] = [:]
    private var depthMemo: [String: Int] = [:]

    var hostCount: Int { hostOrder.count }

    /// Every host name, in first-seen order: what `host_vars/` is searched for.
    var hostNames: [String] { hostOrder }

    /// Every group name, `all` and `ungrouped` included: what `group_vars/` is searched for.
    var groupNames: [String] { groups.keys.sorted(by: Self.precedes) }

    mutating func declareGroup(_ name: String) {
        if groups[name] == nil { groups[name] = Group() }
    }

    /// Adds a host (or another appearance of it) to `group`, with the variables given there.
    mutating func addHost(_ name: String, group: String, vars: [String: String], location: SourceLocation,
                          format: InventoryFormat) {
        declareGroup(group)
        if hostTable[name] == nil {
            hostOrder.append(name)
            hostTable[name] = Host(location: location, format: format)
        }
        if group != "all" && group != "ungrouped" && !hostTable[name]!.groups.contains(group) {
            hostTable[name]!.groups.append(group)
        }
        for (key, value) in vars {
            hostTable[name]!.vars[key] = InventoryVariable(value: value, location: location)
        }
    }

    /// Sets a host variable from an inventory source that names hosts apart from their variables
    /// (`_meta.hostvars` of `ansible-inventory --list`); unknown hosts are ignored, as Ansible does.
    mutating func setHostVar(_ host: String, key: String, value: String, location: SourceLocation?) {
        hostTable[host]?.vars[key] = InventoryVariable(value: value, location: location)
    }

    /// Sets a group variable from an inventory source. `ansible_group_priority` is not a variable
    /// but the group's priority, as in Ansible's `Group.set_variable`.
    mutating func setGroupVar(_ group: String, key: String, value: String, location: SourceLocation?,
                              log: inout DiagnosticLog) {
        declareGroup(group)
        guard key == "ansible_group_priority" else {
            groups[group]!.vars[key] = InventoryVariable(value: value, location: location)
            return
        }
        guard let priority = Int(value.trimmingWhitespace()) else {
            log.error(at: location ?? log.location(1), "ansible_group_priority \(InventoryDiagnostic.quote(value)) of group \(InventoryDiagnostic.quote(group)) is not a whole number; ignored")
            return
        }
        groups[group]!.priority = priority
    }

    /// Adds the variables of one `group_vars/` file (files read later win).
    mutating func addGroupVarsFile(_ group: String, _ vars: [String: InventoryVariable]) {
        guard groups[group] != nil else { return }
        groups[group]!.fileVars.merge(vars) { _, new in new }
    }

    /// Adds the variables of one `host_vars/` file (files read later win).
    mutating func addHostVarsFile(_ host: String, _ vars: [String: InventoryVariable]) {
        hostTable[host]?.fileVars.merge(vars) { _, new in new }
    }

    enum ChildLink {
        case added
        /// The link would make a group its own ancestor, which Ansible also rejects.
        case cycle
        /// More than `maxGroups` groups: a bound against hostile inputs.
        case tooManyGroups
    }

    static let maxGroups = 10_000

    mutating func addChild(_ child: String, to parent: String) -> ChildLink {
        if groups.count >= Self.maxGroups && (groups[child] == nil || groups[parent] == nil) { return .tooManyGroups }
        declareGroup(parent)
        declareGroup(child)
        if child == parent || ancestors(of: parent).contains(child) { return .cycle }
        if !groups[child]!.parents.contains(parent) { groups[child]!.parents.append(parent) }
        depthMemo.removeAll()
        return .added
    }

    /// Resolves every host into an `InventoryHost`.
    mutating func hosts(options: InventoryReadOptions, log: inout DiagnosticLog) -> [InventoryHost] {
        var resolvedGroups: [[String]: (inherited: [String], vars: [String: InventoryVariable])] = [:]
        var result: [InventoryHost] = []
        result.reserveCapacity(hostOrder.count)
        for name in hostOrder {
            let host = hostTable[name]!
            let direct = host.groups.isEmpty ? ["ungrouped"] : host.groups
            let resolved: (inherited: [String], vars: [String: InventoryVariable])
            if let known = resolvedGroups[direct] {
                resolved = known
            } else {
                resolved = resolve(direct)
                resolvedGroups[direct] = resolved
            }
            let vars = resolved.vars.merging(host.vars) { _, new in new }.merging(host.fileVars) { _, new in new }
            if let item = Self.host(name, host, direct: direct, inherited: resolved.inherited, vars: vars, options: options, log: &log) {
                result.append(item)
                if let ports = vars["fleettrust_tls_ports"] {
                    switch TLSInventoryEndpoints.ports(ports.value, for: item) {
                    case .success(let endpoints): result += endpoints
                    case .failure(let error):
                        log.error(at: ports.location ?? host.location, "host \(InventoryDiagnostic.quote(name)): \(error.text); its TLS endpoints are skipped", skipping: 1)
                    }
                }
                if let services = vars["fleettrust_starttls"] {
                    switch TLSInventoryEndpoints.startTLS(services.value, for: item) {
                    case .success(let endpoints): result += endpoints
                    case .failure(let error):
                        log.error(at: services.location ?? host.location, "host \(InventoryDiagnostic.quote(name)): \(error.text); its STARTTLS endpoints are skipped", skipping: 1)
                    }
                }
            }
        }
        return result
    }

    private static func host(_ name: String, _ host: Host, direct: [String], inherited: [String],
                             vars: [String: InventoryVariable], options: InventoryReadOptions, log: inout DiagnosticLog) -> InventoryHost? {
        func place(_ key: String) -> SourceLocation { vars[key]?.location ?? host.location }
        let portKey = vars["ansible_ssh_port"] != nil ? "ansible_ssh_port" : "ansible_port"
        var port = 22
        if let text = vars[portKey]?.value {
            switch HostPattern.port(text) {
            case .success(let value): port = value
            case .failure(let error):
                log.error(at: place(portKey), "host \(InventoryDiagnostic.quote(name)): \(error.text); skipped", skipping: 1)
                return nil
            }
        }
        let addressKey = vars["ansible_ssh_host"] != nil ? "ansible_ssh_host" : "ansible_host"
        let userKey = vars["ansible_ssh_user"] != nil ? "ansible_ssh_user" : "ansible_user"
        let address = vars[addressKey]?.value ?? name
        let user = vars[userKey]?.value
        let plain = vars.mapValues(\.value)
        var settings = SSHHostSettings()
        let arguments = AnsibleSSHArguments.sshOptions(in: plain).filter { $0.keyword != "proxyjump" && $0.keyword != "proxycommand" }
        func apply(_ option: AnsibleSSHArguments.Option) {
            let at = vars[option.variable]?.location
            switch SSHOption.parse(keyword: option.keyword, arguments: option.arguments, rawArguments: option.raw) {
            case .success(.option(let parsed)): settings.apply(parsed, at: at)
            case .success(.noEffect): break
            case .success(.unknown):
                log.warning(at: at ?? host.location, "host \(InventoryDiagnostic.quote(name)): -o \(InventoryDiagnostic.quote(option.keyword)) is not an OpenSSH 9.2 keyword (ssh refuses it); ignored")
            case .failure(let problem):
                log.error(at: at ?? host.location, "host \(InventoryDiagnostic.quote(name)): -o \(problem.text); ignored")
                settings.apply(.unjudged(keyword: SSHOption.spelling(option.keyword),
                                         why: "ssh refuses the option: \(problem.text)"), at: at)
            }
        }
        // Ansible's command line: `ansible_ssh_args`, then its own `-o Port=`/`-o User=`, then the
        // common and extra args; `ssh` keeps the first value of each.
        for option in arguments where option.variable == "ansible_ssh_args" { apply(option) }
        if vars[portKey] != nil { settings.apply(.port(port), at: place(portKey)) }
        if let user { settings.apply(.user(user), at: place(userKey)) }
        for option in arguments where option.variable != "ansible_ssh_args" { apply(option) }
        for finding in AnsibleSSHArguments.unjudged(in: plain) {
            settings.apply(.unjudged(keyword: finding.keyword, why: finding.why), at: vars[finding.variable]?.location)
        }
        // After the command line, the user's configuration, matched against ansible_host.
        options.sshConfiguration?.collect(into: &settings, hostArgument: address, options: options)
        var item = settings.host(named: name, hostArgument: address, address: settings.address(hostArgument: address),
                                 port: settings.port ?? 22, user: settings.user, options: options)
        item.groups = direct
        item.source = host.location
        item.inheritedGroups = inherited
        item.format = host.format
        // ssh reads its command line before its configuration: a proxy in Ansible's arguments
        // (even `none`) wins over the user's configuration, which otherwise still applies.
        if let proxy = AnsibleSSHArguments.proxy(in: plain) {
            item.routing = HostRoute.parse(proxy)
            item.proxyCommandNotAllowed = !options.allowInventoryProxyCommands
        }
        if let policy = vars["fleettrust_policy"]?.value {
            guard PolicyName(rawValue: policy) != nil else {
                log.refuse(at: place("fleettrust_policy"), "host \(InventoryDiagnostic.quote(name)): fleettrust_policy \(InventoryDiagnostic.quote(policy)) is not one of \(PolicyName.allCases.map(\.rawValue).joined(separator: ", ")); a security setting that does not parse refuses the run")
                return nil
            }
            item.policy = policy
        }
        for (key, value) in [(addressKey, address), (userKey, user ?? "")] where value.contains("{{") {
            log.warning(at: place(key), "host \(InventoryDiagnostic.quote(name)): \(key) \(InventoryDiagnostic.quote(value)) is a Jinja2 template, which fleettrust does not evaluate; it is used as written")
        }
        if item.hasUnsafeText {
            log.warning(at: host.location, "host \(InventoryDiagnostic.quote(name)) contains control characters or invalid UTF-8; it is shown sanitized")
        }
        return item
    }

    private mutating func resolve(_ direct: [String]) -> (inherited: [String], vars: [String: InventoryVariable]) {
        var inherited: [String] = []
        var seen = Set(direct + ["all"])
        for group in direct {
            for ancestor in ancestors(of: group) where seen.insert(ancestor).inserted {
                inherited.append(ancestor)
            }
        }
        let keyed = (direct + inherited).map { (depth: depth($0), priority: groups[$0]?.priority ?? 1, name: $0) }
        let ordered = keyed.sorted { left, right in
            if left.depth != right.depth { return left.depth < right.depth }
            if left.priority != right.priority { return left.priority < right.priority }
            return Self.precedes(left.name, right.name)
        }.map(\.name).filter { $0 != "all" }
        var vars = groups["all"]?.vars ?? [:]
        for group in ordered {
            vars.merge(groups[group]?.vars ?? [:]) { _, new in new }
        }
        vars.merge(groups["all"]?.fileVars ?? [:]) { _, new in new }
        for group in ordered {
            vars.merge(groups[group]?.fileVars ?? [:]) { _, new in new }
        }
        return (inherited, vars)
    }

    /// Python's order for `str`: by code point, which is the order of the UTF-8 bytes.
    static func precedes(_ left: String, _ right: String) -> Bool {
        left.utf8.lexicographicallyPrecedes(right.utf8)
    }

    private func ancestors(of group: String) -> [String] {
        var ordered: [String] = []
        var seen = Set<String>()
        var stack = groups[group]?.parents ?? []
        while let next = stack.popLast() {
            guard seen.insert(next).inserted else { continue }
            ordered.append(next)
            stack += groups[next]?.parents ?? []
        }
        return ordered
    }

    /// Ansible's group depth: `all` is 0, a top-level group 1, a child one more than its deepest
    /// parent. Iterative, since a hostile file can chain thousands of groups.
    private mutating func depth(_ group: String) -> Int {
        var stack = [group]
        while let top = stack.last {
            if top == "all" || depthMemo[top] != nil {
                stack.removeLast()
                continue
            }
            let parents = groups[top]?.parents.filter { $0 != "all" } ?? []
            let missing = parents.filter { depthMemo[$0] == nil }
            if missing.isEmpty {
                depthMemo[top] = 1 + (parents.compactMap { depthMemo[$0] }.max() ?? 0)
                stack.removeLast()
            } else {
                stack += missing
            }
        }
        return group == "all" ? 0 : depthMemo[group]!
    }
}
