/// The group tree both Ansible readers fill in, and Ansible's rules for turning it into hosts.
///
/// Variables resolve as Ansible does: `all` vars, then group vars from the shallowest group to the
/// deepest (a child group beats its parent; at equal depth the later name in sort order wins),
/// then host vars. Connection variables are read as Ansible's ssh connection plugin reads them: of
/// `ansible_host`/`ansible_ssh_host` (likewise `_port`, `_user`) the later-listed `ansible_ssh_*`
/// name wins whenever both are set, whatever level each was set at.
struct AnsibleInventoryModel {
    private struct Group {
        var vars: [String: String] = [:]
        var parents: [String] = []
    }

    private struct Host {
        var vars: [String: String] = [:]
        var groups: [String] = []
        var location: SourceLocation
    }

    private var groups: [String: Group] = ["all": Group(), "ungrouped": Group()]
    private var hostOrder: [String] = []
    private var hostTable: [String: Host] = [:]
    private var depthMemo: [String: Int] = [:]

    var hostCount: Int { hostOrder.count }

    mutating func declareGroup(_ name: String) {
        if groups[name] == nil { groups[name] = Group() }
    }

    /// Adds a host (or another appearance of it) to `group`, with the variables given there.
    mutating func addHost(_ name: String, group: String, vars: [String: String], location: SourceLocation) {
        declareGroup(group)
        if hostTable[name] == nil {
            hostOrder.append(name)
            hostTable[name] = Host(location: location)
        }
        if group != "all" && group != "ungrouped" && !hostTable[name]!.groups.contains(group) {
            hostTable[name]!.groups.append(group)
        }
        hostTable[name]!.vars.merge(vars) { _, new in new }
    }

    mutating func setGroupVar(_ group: String, key: String, value: String) {
        declareGroup(group)
        groups[group]!.vars[key] = value
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
    mutating func hosts(format: InventoryFormat, log: inout DiagnosticLog) -> [InventoryHost] {
        var resolvedGroups: [[String]: (inherited: [String], vars: [String: String])] = [:]
        var result: [InventoryHost] = []
        result.reserveCapacity(hostOrder.count)
        for name in hostOrder {
            let host = hostTable[name]!
            let direct = host.groups.isEmpty ? ["ungrouped"] : host.groups
            let resolved: (inherited: [String], vars: [String: String])
            if let known = resolvedGroups[direct] {
                resolved = known
            } else {
                resolved = resolve(direct)
                resolvedGroups[direct] = resolved
            }
            let vars = resolved.vars.merging(host.vars) { _, hostValue in hostValue }
            var port = 22
            if let text = vars["ansible_ssh_port"] ?? vars["ansible_port"] {
                switch HostPattern.port(text) {
                case .success(let value): port = value
                case .failure(let error):
                    log.error(host.location.line, "host \(InventoryDiagnostic.quote(name)): \(error.text); skipped", skipping: 1)
                    continue
                }
            }
            let address = vars["ansible_ssh_host"] ?? vars["ansible_host"] ?? name
            let options = Self.sshOptions(in: vars)
            var item = InventoryHost(name: name, address: address, port: port,
                                     user: vars["ansible_ssh_user"] ?? vars["ansible_user"],
                                     groups: direct, hostKeyAlias: options["hostkeyalias"],
                                     userKnownHostsFiles: options["userknownhostsfile"].map(Self.files) ?? [],
                                     source: host.location,
                                     inheritedGroups: resolved.inherited, format: format,
                                     proxy: Self.proxy(in: vars),
                                     sshOptions: SSHHostOptions(hostKeyAlgorithms: options["hostkeyalgorithms"],
                                                                globalKnownHostsFiles: options["globalknownhostsfile"].map(Self.files),
                                                                checkHostIP: options["checkhostip"].flatMap(SSHConfigLayout.flag),
                                                                hashKnownHosts: options["hashknownhosts"].flatMap(SSHConfigLayout.flag)))
            if let policy = vars["fleettrust_policy"] {
                if PolicyName(rawValue: policy) != nil {
                    item.policy = policy
                } else {
                    log.error(host.location.line, "host \(InventoryDiagnostic.quote(name)): fleettrust_policy \(InventoryDiagnostic.quote(policy)) is not one of \(PolicyName.allCases.map(\.rawValue).joined(separator: ", ")); skipped",
                              skipping: 1)
                    continue
                }
            }
            if item.hasUnsafeText {
                log.warning(host.location.line, "host \(InventoryDiagnostic.quote(name)) contains control characters or invalid UTF-8; it is shown sanitized")
            }
            result.append(item)
        }
        return result
    }

    /// The `-o Keyword=value` options (and `-oKeyword=value`, `-o Keyword value`) in Ansible's ssh
    /// arguments, first value winning as in `ssh`, keywords lowercased. Common args come first,
    /// then extra args, the order in which Ansible puts them on ssh's command line.
    static func sshOptions(in vars: [String: String]) -> [String: String] {
        var options: [String: String] = [:]
        for key in ["ansible_ssh_common_args", "ansible_ssh_extra_args"] {
            guard let value = vars[key] else { continue }
            let tokens = value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map { token -> String in
                let quote: (Character) -> Bool = { $0 == "'" || $0 == "\"" }
                return String(token.drop(while: quote).reversed().drop(while: quote).reversed())
            }
            var index = 0
            while index < tokens.count {
                var option: String?
                if tokens[index] == "-o", index + 1 < tokens.count {
                    option = tokens[index + 1]
                    index += 1
                } else if tokens[index].hasPrefix("-o") {
                    option = String(tokens[index].dropFirst(2))
                }
                index += 1
                guard let option else { continue }
                let parts = option.split(maxSplits: 1, whereSeparator: { $0 == "=" || $0 == " " })
                var keyword = parts.first.map { String($0).lowercased() } ?? ""
                var argument = parts.count > 1 ? String(parts[1]) : nil
                if argument == nil, index < tokens.count, !tokens[index].hasPrefix("-") {
                    argument = tokens[index]
                    index += 1
                }
                keyword = keyword.trimmingCharacters(in: .whitespaces)
                if let argument, !keyword.isEmpty, options[keyword] == nil { options[keyword] = argument }
            }
        }
        return options
    }

    private static func files(_ value: String) -> [String] {
        value.split(separator: " ").map(String.init)
    }

    /// The proxy Ansible's ssh would go through: a `ProxyJump`/`ProxyCommand` option or `-J`
    /// in `ansible_ssh_common_args` or `ansible_ssh_extra_args`, described as written.
    static func proxy(in vars: [String: String]) -> String? {
        for key in ["ansible_ssh_common_args", "ansible_ssh_extra_args"] {
            guard let value = vars[key] else { continue }
            let tokens = value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map { token -> String in
                let quote: (Character) -> Bool = { $0 == "'" || $0 == "\"" }
                return String(token.drop(while: quote).reversed().drop(while: quote).reversed())
            }
            for (index, token) in tokens.enumerated() {
                let lower = token.lowercased()
                let option = lower.hasPrefix("-o") ? String(lower.dropFirst(2)) : lower
                for name in ["proxyjump", "proxycommand"] where option.hasPrefix(name) {
                    var argument = option.dropFirst(name.count).drop { $0 == "=" || $0 == " " }
                    if argument.isEmpty, index + 1 < tokens.count { argument = Substring(tokens[index + 1].lowercased()) }
                    if argument != "none" { return "\(key)=\(value)" }
                }
                if token.hasPrefix("-J") { return "\(key)=\(value)" }
            }
        }
        return nil
    }

    private mutating func resolve(_ direct: [String]) -> (inherited: [String], vars: [String: String]) {
        var inherited: [String] = []
        var seen = Set(direct + ["all"])
        for group in direct {
            for ancestor in ancestors(of: group) where seen.insert(ancestor).inserted {
                inherited.append(ancestor)
            }
        }
        let ordered = (direct + inherited).sorted { (depth($0), $0) < (depth($1), $1) }
        var vars = groups["all"]?.vars ?? [:]
        for group in ordered where group != "all" {
            vars.merge(groups[group]?.vars ?? [:]) { _, new in new }
        }
        return (inherited, vars)
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
