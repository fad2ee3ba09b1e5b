import Yams

/// Reads what `ansible-inventory --list` prints, which is also what every dynamic inventory script
/// prints for `--list`: so that any inventory Ansible can resolve (cloud plugins, CMDB scripts)
/// reaches fleettrust as `--inventory <(ansible-inventory -i X --list)`.
///
/// Follows Ansible's `plugins/inventory/script.py`: each top-level key is a group whose value is a
/// list of host names, or a mapping with `hosts` (a list), `vars` (a mapping) and `children` (a
/// list of group names); a mapping with none of those keys is the short form of a host named like
/// the group with those variables. Host variables come from `_meta.hostvars`. Host names are
/// taken as written (no ports or ranges), as the script plugin takes them. JSON is parsed as YAML
/// (a superset), with the same guards against hostile input as YAML inventories.
enum AnsibleInventoryJSONReader {
    static func read(_ contents: String, options: InventoryReadOptions, log: inout DiagnosticLog,
                     detected: Bool) -> [InventoryHost] {
        var model = AnsibleInventoryModel()
        read(contents, into: &model, options: options, log: &log, detected: detected)
        return model.hosts(options: options, log: &log)
    }

    /// Adds one document to `model`. A document that was only detected as JSON (not named with
    /// `--inventory-format json`) and has the shape of a YAML inventory (`hosts` as a mapping) is
    /// read as one, as Ansible reads `.json` files in an inventory directory.
    ///
    /// Returns the hosts that still need their variables from the script (`--host NAME`), which
    /// is every host when the document has no `_meta`.
    @discardableResult
    static func read(_ contents: String, into model: inout AnsibleInventoryModel, options: InventoryReadOptions,
                     log: inout DiagnosticLog, detected: Bool) -> [String] {
        guard let root = AnsibleYAMLReader.compose(contents, log: &log) else { return [] }
        if detected && !hasListShape(root) {
            AnsibleYAMLReader.read(root, into: &model, options: options, log: &log)
            return []
        }
        return read(root, into: &model, options: options, log: &log)
    }

    /// Whether a document is in the list shape, rather than a YAML inventory written as JSON.
    static func hasListShape(_ root: Node) -> Bool {
        guard case .mapping(let top) = root else { return true }
        for (key, value) in top {
            if AnsibleYAMLReader.scalar(key) == "_meta" { return true }
            switch value {
            case .sequence: return true
            case .mapping(let body):
                for part in ["hosts", "children"] {
                    if case .sequence = entry(body, part) { return true }
                }
            case .scalar: continue
            }
        }
        return false
    }

    private static func read(_ root: Node, into model: inout AnsibleInventoryModel, options: InventoryReadOptions,
                             log: inout DiagnosticLog) -> [String] {
        guard case .mapping(let top) = root else {
            log.error(root.mark?.line ?? 1, "an ansible-inventory JSON document must be an object of groups; file skipped")
            return []
        }
        var budget = AnsibleYAMLReader.maxNodes
        var hostVars: Node.Mapping?
        var seen: [String] = []
        var seenSet = Set<String>()
        for (key, value) in top {
            guard let group = AnsibleYAMLReader.scalar(key) else {
                log.error(key.mark?.line ?? 1, "group names must be plain text")
                continue
            }
            if group == "_meta" {
                hostVars = metaHostVars(value, log: &log)
                continue
            }
            for name in readGroup(group, value, into: &model, log: &log, budget: &budget) where seenSet.insert(name).inserted {
                seen.append(name)
            }
            if model.hostCount > options.maxHosts {
                log.error(key.mark?.line ?? 1, "more than \(options.maxHosts) hosts; the rest of the file is skipped")
                break
            }
        }
        guard let hostVars else { return seen }
        for (key, value) in hostVars {
            guard let host = AnsibleYAMLReader.scalar(key), seenSet.contains(host) else { continue }
            readHostVars(host, value, into: &model, log: &log)
        }
        return []
    }

    /// Sets a host's variables from a mapping: an entry of `_meta.hostvars`, or what a script
    /// printed for `--host NAME`.
    static func readHostVars(_ host: String, _ node: Node, into model: inout AnsibleInventoryModel,
                             log: inout DiagnosticLog) {
        if node.null != nil { return }
        guard case .mapping(let vars) = node else {
            log.error(node.mark?.line ?? 1, "the variables of host \(InventoryDiagnostic.quote(host)) must be an object; ignored")
            return
        }
        for (key, value) in vars {
            let line = key.mark?.line ?? 1
            guard let name = AnsibleYAMLReader.scalar(key),
                  let text = AnsibleVariableValue.text(name, value, line: line, log: &log) else { continue }
            model.setHostVar(host, key: name, value: text, location: log.location(line))
        }
    }

    private static func metaHostVars(_ meta: Node, log: inout DiagnosticLog) -> Node.Mapping? {
        guard case .mapping(let body) = meta else {
            log.error(meta.mark?.line ?? 1, "_meta must be an object with hostvars; ignored")
            return nil
        }
        guard let hostVars = entry(body, "hostvars") else { return nil }
        guard case .mapping(let mapping) = hostVars else {
            log.error(hostVars.mark?.line ?? 1, "_meta.hostvars must be an object of hosts; ignored")
            return nil
        }
        return mapping
    }

    /// Reads one group; returns the hosts it names.
    private static func readGroup(_ group: String, _ node: Node, into model: inout AnsibleInventoryModel,
                                  log: inout DiagnosticLog, budget: inout Int) -> [String] {
        model.declareGroup(group)
        var hosts: Node?
        var vars: Node?
        var children: Node?
        var names: [String] = []
        switch node {
        case .sequence: hosts = node
        case .mapping(let body):
            hosts = entry(body, "hosts")
            vars = entry(body, "vars")
            children = entry(body, "children")
            if hosts == nil && vars == nil && children == nil {
                model.addHost(group, group: group, vars: [:], location: log.location(node.mark?.line ?? 1), format: .ansibleJSON)
                names.append(group)
                vars = node
            }
        case .scalar:
            if node.null == nil {
                log.error(node.mark?.line ?? 1, "group \(InventoryDiagnostic.quote(group)) must be a list of hosts or an object with hosts, vars or children; skipped")
            }
            return []
        }
        if let hosts {
            if case .sequence(let list) = hosts {
                for item in list {
                    budget -= 1
                    guard budget > 0 else { break }
                    guard let name = AnsibleYAMLReader.scalar(item), !name.isEmpty else {
                        log.error(item.mark?.line ?? 1, "host names in group \(InventoryDiagnostic.quote(group)) must be plain text; skipped", skipping: 1)
                        continue
                    }
                    model.addHost(name, group: group, vars: [:], location: log.location(item.mark?.line ?? 1), format: .ansibleJSON)
                    names.append(name)
                }
            } else if hosts.null == nil {
                log.error(hosts.mark?.line ?? 1, "the hosts of group \(InventoryDiagnostic.quote(group)) must be a list of names; skipped")
            }
        }
        if let vars, vars.null == nil {
            if case .mapping(let mapping) = vars {
                for (key, value) in mapping {
                    let line = key.mark?.line ?? 1
                    guard let name = AnsibleYAMLReader.scalar(key),
                          let text = AnsibleVariableValue.text(name, value, line: line, log: &log) else { continue }
                    model.setGroupVar(group, key: name, value: text, location: log.location(line), log: &log)
                }
            } else {
                log.error(vars.mark?.line ?? 1, "the vars of group \(InventoryDiagnostic.quote(group)) must be an object; ignored")
            }
        }
        if let children, children.null == nil {
            guard case .sequence(let list) = children else {
                log.error(children.mark?.line ?? 1, "the children of group \(InventoryDiagnostic.quote(group)) must be a list of group names; ignored")
                return names
            }
            for item in list {
                guard let child = AnsibleYAMLReader.scalar(item) else {
                    log.error(item.mark?.line ?? 1, "group names must be plain text")
                    continue
                }
                switch model.addChild(child, to: group) {
                case .added: break
                case .cycle:
                    log.error(item.mark?.line ?? 1, "group \(InventoryDiagnostic.quote(child)) cannot be a child of \(InventoryDiagnostic.quote(group)): that makes a cycle; link ignored")
                case .tooManyGroups:
                    log.error(item.mark?.line ?? 1, "more than \(AnsibleInventoryModel.maxGroups) groups; link ignored")
                }
            }
        }
        return names
    }

    /// The value under `key` in a mapping, compared as text (JSON keys are quoted scalars).
    static func entry(_ mapping: Node.Mapping, _ key: String) -> Node? {
        mapping.first { AnsibleYAMLReader.scalar($0.key) == key }?.value
    }
}
