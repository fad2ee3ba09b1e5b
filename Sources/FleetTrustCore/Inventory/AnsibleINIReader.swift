/// Reads Ansible INI inventories: `[group]`, `[group:children]`, `[group:vars]` sections, host
/// lines with `key=value` variables and ranges, hosts before any section in `ungrouped`.
///
/// Follows Ansible's `plugins/inventory/ini.py`: lines are stripped, `#` and `;` start comment
/// lines, host lines are split like a shell (`shlex`), vars lines split at the first `=`.
enum AnsibleINIReader {
    enum SectionKind: String {
        case hosts
        case children
        case vars
    }

    struct Section {
        var group: String
        var kind: SectionKind
    }

    /// Parses `[name]` or `[name:kind]`; `nil` for anything else (such as a host line `[::1]:2222`).
    static func sectionHeader<S: StringProtocol>(_ line: S) -> (group: String, kind: String?)? {
        guard line.hasPrefix("[") else { return nil }
        var body = Substring(line.dropFirst())
        if let hash = body.firstIndex(of: "#") { body = body[..<hash] }
        body = body.trimmingWhitespace()
        guard body.hasSuffix("]") else { return nil }
        body = body.dropLast()
        let parts = body.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let group = parts[0]
        guard !group.isEmpty, !group.contains(where: { $0 == "]" || $0 == "[" || $0 == " " || $0 == "\t" }) else { return nil }
        if parts.count == 2 {
            let kind = parts[1]
            guard !kind.isEmpty, kind.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { return nil }
            return (String(group), String(kind))
        }
        return (String(group), nil)
    }

    static func read(_ contents: String, options: InventoryReadOptions, log: inout DiagnosticLog) -> [InventoryHost] {
        var model = AnsibleInventoryModel()
        read(contents, into: &model, options: options, log: &log)
        return model.hosts(options: options, log: &log)
    }

    /// Adds one file's groups, hosts and variables to `model`, which may hold other files already
    /// (the files of an inventory directory share one model, as they share one inventory in Ansible).
    static func read(_ contents: String, into model: inout AnsibleInventoryModel, options: InventoryReadOptions,
                     log: inout DiagnosticLog) {
        var section = Section(group: "ungrouped", kind: .hosts)
        for line in InventoryLines.split(contents, maxLength: options.maxLineLength, log: &log) {
            let text = line.text.trimmingWhitespace()
            if text.isEmpty || text.hasPrefix("#") || text.hasPrefix(";") { continue }
            if let header = sectionHeader(text) {
                guard let kind = header.kind.map({ SectionKind(rawValue: $0) }) ?? .hosts else {
                    log.error(line.number, "unknown section kind \(InventoryDiagnostic.quote(header.kind!)) for group \(InventoryDiagnostic.quote(header.group)); expected children or vars; its lines are skipped")
                    section = Section(group: "", kind: .vars)
                    continue
                }
                section = Section(group: header.group, kind: kind)
                model.declareGroup(header.group)
                continue
            }
            if section.group.isEmpty { continue }
            switch section.kind {
            case .hosts:
                readHostLine(text, line: line.number, group: section.group, model: &model, options: options, log: &log)
            case .children:
                readChildLine(text, line: line.number, parent: section.group, model: &model, log: &log)
            case .vars:
                guard let equals = text.firstIndex(of: "=") else {
                    log.error(line.number, "expected key=value in [\(Sanitizer.clean(section.group, limit: 80)):vars], found \(InventoryDiagnostic.quote(text))")
                    continue
                }
                let key = text[..<equals].trimmingWhitespace()
                let value = text[text.index(after: equals)...].trimmingWhitespace()
                model.setGroupVar(section.group, key: String(key), value: unquoted(value),
                                  location: log.location(line.number), log: &log)
            }
            if model.hostCount > options.maxHosts {
                log.error(line.number, "more than \(options.maxHosts) hosts; the rest of the file is skipped")
                break
            }
        }
    }

    private static func readChildLine(_ text: Substring, line: Int, parent: String,
                                      model: inout AnsibleInventoryModel, log: inout DiagnosticLog) {
        var name = text
        if let hash = name.firstIndex(of: "#") { name = name[..<hash].trimmingWhitespace() }
        guard !name.isEmpty, !name.contains(where: { $0 == " " || $0 == "\t" }) else {
            log.error(line, "expected one group name in [\(Sanitizer.clean(parent, limit: 80)):children], found \(InventoryDiagnostic.quote(text))")
            return
        }
        switch model.addChild(String(name), to: parent) {
        case .added: break
        case .cycle:
            log.error(line, "group \(InventoryDiagnostic.quote(name)) cannot be a child of \(InventoryDiagnostic.quote(parent)): that makes a cycle; link ignored")
        case .tooManyGroups:
            log.error(line, "more than \(AnsibleInventoryModel.maxGroups) groups; link ignored")
        }
    }

    private static func readHostLine(_ text: Substring, line: Int, group: String, model: inout AnsibleInventoryModel,
                                     options: InventoryReadOptions, log: inout DiagnosticLog) {
        let words: [String]
        do {
            words = try InventoryLines.words(text)
        } catch {
            log.error(line, "unterminated quote in host line; skipped", skipping: 1)
            return
        }
        guard let pattern = words.first else { return }
        var vars: [String: String] = [:]
        for word in words.dropFirst() {
            guard let equals = word.firstIndex(of: "=") else {
                log.error(line, "expected key=value host variable after \(InventoryDiagnostic.quote(pattern)), found \(InventoryDiagnostic.quote(word)); host skipped", skipping: 1)
                return
            }
            vars[String(word[..<equals])] = String(word[word.index(after: equals)...])
        }
        let endpoint: HostPattern.Endpoint
        switch HostPattern.endpoint(pattern) {
        case .failure(let error):
            log.error(line, "\(error.text); host skipped", skipping: 1)
            return
        case .success(let value):
            endpoint = value
        }
        if let port = endpoint.port, vars["ansible_port"] == nil { vars["ansible_port"] = String(port) }
        switch HostRange.expand(endpoint.host, limit: options.maxHostsPerRange) {
        case .failure(let error):
            log.error(line, "\(error.text); skipped", skipping: 1)
        case .success(let names):
            for name in names {
                model.addHost(name, group: group, vars: vars, location: log.location(line), format: .ansibleINI)
            }
        }
    }

    /// Ansible evaluates quoted values as Python literals; for strings that removes one pair of quotes.
    static func unquoted<S: StringProtocol>(_ value: S) -> String {
        if value.count >= 2, let first = value.first, first == value.last, first == "\"" || first == "'" {
            return String(value.dropFirst().dropLast())
        }
        return String(value)
    }
}
