import Foundation
import Yams

/// Reads Ansible YAML inventories (`all: hosts: / children: / vars:`) with Yams.
///
/// Each top-level key is a group (normally `all`); a group may have `hosts` (a mapping from host
/// pattern to its variables), `children` (a mapping of groups) and `vars`. Host patterns take the
/// same ports and ranges as INI. YAML aliases can make a small file describe a huge tree, so the
/// walk has a node budget, and input nested deeper than Yams can compose is refused before
/// composing (`YAMLNesting`).
enum AnsibleYAMLReader {
    static let maxNodes = 2_000_000
    /// Group entries visited; a realistic inventory has a few thousand, an alias bomb billions.
    static let maxGroupVisits = 50_000

    private struct Walk {
        var model: AnsibleInventoryModel
        var budget = AnsibleYAMLReader.maxNodes
        var groupVisits = AnsibleYAMLReader.maxGroupVisits
        var exhausted = false
        var options: InventoryReadOptions
        var log: DiagnosticLog
    }

    static func read(_ contents: String, options: InventoryReadOptions, log: inout DiagnosticLog) -> [InventoryHost] {
        var model = AnsibleInventoryModel()
        read(contents, into: &model, options: options, log: &log)
        return model.hosts(options: options, log: &log)
    }

    /// Adds one file's groups, hosts and variables to `model`, which may hold other files already.
    static func read(_ contents: String, into model: inout AnsibleInventoryModel, options: InventoryReadOptions,
                     log: inout DiagnosticLog) {
        guard let root = compose(contents, log: &log) else { return }
        read(root, into: &model, options: options, log: &log)
    }

    /// Parses YAML (or JSON) with the nesting guard; `nil` after logging why when it cannot be read.
    static func compose(_ contents: String, log: inout DiagnosticLog) -> Node? {
        if let line = YAMLNesting.firstTooDeep(contents) {
            log.error(line, "nested more than \(YAMLNesting.limit) levels deep; file skipped")
            return nil
        }
        do {
            return try Yams.compose(yaml: contents)
        } catch let error as YamlError {
            log.error(line(of: error), "YAML syntax error: \(problem(of: error)); file skipped")
        } catch {
            log.error(1, "YAML could not be read; file skipped")
        }
        return nil
    }

    /// Walks an already parsed document in the shape of Ansible's YAML inventory.
    static func read(_ root: Node, into model: inout AnsibleInventoryModel, options: InventoryReadOptions,
                     log: inout DiagnosticLog) {
        if root.null != nil { return }
        guard case .mapping(let top) = root else {
            log.error(root.mark?.line ?? 1, "an Ansible YAML inventory must be a mapping of groups (such as all:); file skipped")
            return
        }
        if let plugin = root["plugin"].flatMap(scalar) {
            log.error(root["plugin"]?.mark?.line ?? 1, "this is the configuration of the inventory plugin \(InventoryDiagnostic.quote(plugin)), which fleettrust cannot run; give fleettrust the output of `ansible-inventory -i FILE --list` instead; file skipped")
            return
        }
        var walk = Walk(model: AnsibleInventoryModel(), options: options, log: log)
        swap(&walk.model, &model)
        for (key, value) in top {
            guard let group = scalar(key) else {
                walk.log.error(key.mark?.line ?? 1, "group names must be plain text")
                continue
            }
            walk.model.declareGroup(group)
            readGroup(group, value, walk: &walk)
        }
        log = walk.log
        swap(&walk.model, &model)
    }

    private static func readGroup(_ group: String, _ node: Node, walk: inout Walk) {
        guard spend(node, walk: &walk) else { return }
        walk.groupVisits -= 1
        if walk.groupVisits < 0 {
            walk.budget = 0
            _ = spend(node, walk: &walk)
            return
        }
        if node.null != nil { return }
        guard case .mapping(let body) = node else {
            walk.log.error(node.mark?.line ?? 1, "group \(InventoryDiagnostic.quote(group)) must be a mapping with hosts, children or vars")
            return
        }
        for (key, value) in body {
            guard spend(key, walk: &walk) else { return }
            switch scalar(key) {
            case "hosts": readHosts(group, value, walk: &walk)
            case "vars":
                for (name, text, line) in variables(value, what: "vars of group \(InventoryDiagnostic.quote(group))", walk: &walk) {
                    walk.model.setGroupVar(group, key: name, value: text, location: walk.log.location(line), log: &walk.log)
                }
            case "children":
                guard let children = mappingOrNull(value, what: "children of group \(InventoryDiagnostic.quote(group))", walk: &walk) else { continue }
                for (childKey, childValue) in children {
                    guard spend(childKey, walk: &walk) else { return }
                    guard let child = scalar(childKey) else {
                        walk.log.error(childKey.mark?.line ?? 1, "group names must be plain text")
                        continue
                    }
                    switch walk.model.addChild(child, to: group) {
                    case .added: readGroup(child, childValue, walk: &walk)
                    case .cycle:
                        walk.log.error(childKey.mark?.line ?? 1, "group \(InventoryDiagnostic.quote(child)) cannot be a child of \(InventoryDiagnostic.quote(group)): that makes a cycle; skipped")
                    case .tooManyGroups:
                        walk.log.error(childKey.mark?.line ?? 1, "more than \(AnsibleInventoryModel.maxGroups) groups; group skipped")
                    }
                }
            default:
                walk.log.warning(key.mark?.line ?? 1, "unknown key \(InventoryDiagnostic.quote(scalar(key) ?? "?")) in group \(InventoryDiagnostic.quote(group)) ignored (expected hosts, children or vars)")
            }
        }
    }

    private static func readHosts(_ group: String, _ node: Node, walk: inout Walk) {
        guard let hosts = mappingOrNull(node, what: "hosts of group \(InventoryDiagnostic.quote(group))", walk: &walk) else { return }
        for (key, value) in hosts {
            guard spend(key, walk: &walk) else { return }
            let line = key.mark?.line ?? 1
            guard let pattern = scalar(key), !pattern.isEmpty else {
                walk.log.error(line, "host names must be plain text; skipped", skipping: 1)
                continue
            }
            var vars: [String: String] = [:]
            for (name, text, _) in variables(value, what: "host \(InventoryDiagnostic.quote(pattern))", walk: &walk) {
                vars[name] = text
            }
            let endpoint: HostPattern.Endpoint
            switch HostPattern.endpoint(pattern) {
            case .failure(let error):
                walk.log.error(line, "\(error.text); host skipped", skipping: 1)
                continue
            case .success(let value):
                endpoint = value
            }
            if let port = endpoint.port, vars["ansible_port"] == nil { vars["ansible_port"] = String(port) }
            switch HostRange.expand(endpoint.host, limit: walk.options.maxHostsPerRange) {
            case .failure(let error):
                walk.log.error(line, "\(error.text); skipped", skipping: 1)
            case .success(let names):
                for name in names {
                    walk.model.addHost(name, group: group, vars: vars, location: walk.log.location(line), format: .ansibleYAML)
                }
            }
            if walk.model.hostCount > walk.options.maxHosts {
                walk.log.error(line, "more than \(walk.options.maxHosts) hosts; the rest of the file is skipped")
                walk.budget = 0
                walk.exhausted = true
                return
            }
        }
    }

    /// The variables of a `vars` mapping or a host entry, with the line of each (see
    /// `AnsibleVariableValue` for lists and mappings).
    private static func variables(_ node: Node, what: String, walk: inout Walk) -> [(String, String, Int)] {
        guard let mapping = mappingOrNull(node, what: what, walk: &walk) else { return [] }
        var result: [(String, String, Int)] = []
        for (key, value) in mapping {
            guard spend(key, walk: &walk), spend(value, walk: &walk) else { break }
            let line = key.mark?.line ?? 1
            if let name = scalar(key), let text = AnsibleVariableValue.text(name, value, line: line, log: &walk.log) {
                result.append((name, text, line))
            }
        }
        return result
    }

    private static func mappingOrNull(_ node: Node, what: String, walk: inout Walk) -> Node.Mapping? {
        guard spend(node, walk: &walk) else { return nil }
        switch node {
        case .mapping(let mapping): return mapping
        case .scalar where node.null != nil: return nil
        default:
            walk.log.error(node.mark?.line ?? 1, "\(what) must be a mapping")
            return nil
        }
    }

    static func scalar(_ node: Node) -> String? {
        guard case .scalar(let value) = node else { return nil }
        return value.string
    }

    private static func spend(_ node: Node, walk: inout Walk) -> Bool {
        guard walk.budget > 0 else {
            if !walk.exhausted {
                walk.exhausted = true
                walk.log.error(node.mark?.line ?? 1, "YAML expands to more than \(maxNodes) nodes or \(maxGroupVisits) groups (aliases?); the rest is skipped")
            }
            return false
        }
        walk.budget -= 1
        return true
    }

    private static func line(of error: YamlError) -> Int {
        switch error {
        case .scanner(_, _, let mark, _), .parser(_, _, let mark, _), .composer(_, _, let mark, _):
            return mark.line
        default:
            return 1
        }
    }

    private static func problem(of error: YamlError) -> String {
        switch error {
        case .scanner(_, let problem, _, _), .parser(_, let problem, _, _), .composer(_, let problem, _, _),
             .reader(let problem, _, _, _):
            return Sanitizer.clean(problem, limit: 120)
        default:
            return "unreadable input"
        }
    }
}
