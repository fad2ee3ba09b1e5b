import Yams

/// How a YAML or JSON value of an inventory variable becomes the text fleettrust reads, for every
/// Ansible reader (YAML, `ansible-inventory --list` JSON, `group_vars/` and `host_vars/` files).
///
/// A variable fleettrust reads (a connection variable, or one of its own `fleettrust_*`) written
/// as a value of the wrong kind is never dropped quietly: it would silently lose endpoints or, for
/// `fleettrust_policy`, judge a host under a weaker policy than asked. The list variables take
/// their natural YAML forms (a list is the comma list; a `fleettrust_starttls` mapping
/// `{postgres: 5432}` is `postgres:5432`); any other list or mapping refuses the run with its
/// file:line. Variables fleettrust does not read keep whatever kind they have and are left out
/// (`fleettrust_scan_args` of the fan-out playbook is a list by design).
enum AnsibleVariableValue {
    /// The inventory variables whose text fleettrust reads.
    static let readVariables: Set<String> = [
        "ansible_host", "ansible_ssh_host", "ansible_port", "ansible_ssh_port", "ansible_user", "ansible_ssh_user",
        "ansible_ssh_args", "ansible_ssh_common_args", "ansible_ssh_extra_args", "ansible_group_priority",
        "fleettrust_policy", "fleettrust_tls_ports", "fleettrust_starttls",
    ]

    /// Variables whose value is a comma list, and so may be written as a YAML list.
    static let listVariables: Set<String> = ["fleettrust_tls_ports", "fleettrust_starttls"]

    /// The text of variable `name` as fleettrust uses it; nil for null, `!vault` values (which
    /// fleettrust cannot decrypt) and lists or mappings of variables it does not read. A list or
    /// mapping it cannot read is refused in `log` at the variable's line.
    static func text(_ name: String, _ node: Node, line: Int, log: inout DiagnosticLog) -> String? {
        switch node {
        case .scalar(let value):
            guard node.null == nil, value.tag.description != "!vault" else { return nil }
            return value.string
        case .sequence(let items) where listVariables.contains(name):
            let entries = items.map { entry($0) }
            if entries.allSatisfy({ $0 != nil }) { return entries.map { $0! }.joined(separator: ",") }
        case .mapping(let pairs) where name == "fleettrust_starttls":
            let entries = pairs.map { pair -> String? in
                guard let service = entry(pair.key) else { return nil }
                if pair.value.null != nil { return service }
                return entry(pair.value).map { "\(service):\($0)" }
            }
            if entries.allSatisfy({ $0 != nil }) { return entries.map { $0! }.joined(separator: ",") }
        default:
            break
        }
        guard readVariables.contains(name) else { return nil }
        let kind: String
        if case .sequence = node { kind = "a list" } else { kind = "a mapping" }
        let expected = listVariables.contains(name)
            ? (name == "fleettrust_starttls" ? "text, a list of protocol[:port] or a mapping of protocol to port" : "text or a list of ports")
            : "a single value"
        log.refuse(at: log.location(line), "\(name) is \(kind) that fleettrust cannot read (expected \(expected)); a setting that does not parse refuses the run")
        return nil
    }

    /// One element of a list form: plain text without a comma (which would split it silently).
    private static func entry(_ node: Node) -> String? {
        guard case .scalar(let value) = node, node.null == nil, value.tag.description != "!vault",
              !value.string.contains(",") else { return nil }
        return value.string
    }
}
