import Foundation
import Yams

/// `group_vars/` and `host_vars/` beside an inventory, found and read as Ansible's
/// `host_group_vars` vars plugin and `DataLoader.find_vars_files` do, so hosts get the same
/// addresses, ports and users Ansible gives them.
///
/// For a group or host `NAME`, the first of `NAME`, `NAME.yml`, `NAME.yaml`, `NAME.json` that
/// exists is used, and only that one. A directory is read whole: its entries in name order,
/// descending into subdirectories without an extension, skipping hidden names and names ending
/// in `~`, and taking files with no extension or one of those three. A later file wins over an
/// earlier one. The base directory is the inventory directory itself, or the directory of an
/// inventory file or script.
struct AnsibleVarsFiles {
    static let extensions = [".yml", ".yaml", ".json"]
    static let maxFilesPerName = 1_000

    let baseDirectory: String
    let options: InventoryReadOptions
    let maxFileBytes: Int

    /// Reads the variables files of every group and host in `model` into it.
    func apply(to model: inout AnsibleInventoryModel, diagnostics: inout [InventoryDiagnostic]) {
        for (kind, names) in [("group_vars", model.groupNames), ("host_vars", model.hostNames)] {
            let directory = InventoryFile.join(baseDirectory, kind)
            guard let found = try? InventoryFile.kind(directory) else { continue }
            guard found == .directory else {
                diagnostics.append(InventoryDiagnostic(.warning, SourceLocation(file: directory, line: 1),
                                                       "\(kind) is not a directory; skipped"))
                continue
            }
            for name in names where !name.hasPrefix("/") {
                for file in Self.files(in: directory, named: name) {
                    let vars = read(file, diagnostics: &diagnostics)
                    guard !vars.isEmpty else { continue }
                    if kind == "group_vars" {
                        model.addGroupVarsFile(name, vars)
                    } else {
                        model.addHostVarsFile(name, vars)
                    }
                }
            }
        }
    }

    /// The files that hold the variables of `name` in `directory` (a `group_vars/` or
    /// `host_vars/`), in the order they are applied.
    static func files(in directory: String, named name: String) -> [String] {
        let base = InventoryFile.join(directory, name)
        for ext in [""] + extensions {
            let path = base + ext
            guard let kind = try? InventoryFile.kind(path) else { continue }
            if kind == .directory {
                var found: [String] = []
                collect(path, depth: 0, into: &found)
                return found
            }
            return [path]
        }
        return []
    }

    private static func collect(_ directory: String, depth: Int, into found: inout [String]) {
        guard depth <= AnsibleInventoryDirectory.maxDepth, let names = try? AnsibleInventoryDirectory.entries(of: directory) else { return }
        for name in names where !name.hasPrefix(".") && !name.hasSuffix("~") && found.count < maxFilesPerName {
            let path = InventoryFile.join(directory, name)
            let ext = AnsibleInventoryDirectory.pythonExtension(name)
            let kind = try? InventoryFile.kind(path)
            if kind == .directory {
                if ext.isEmpty { collect(path, depth: depth + 1, into: &found) }
            } else if kind != nil && (ext.isEmpty || extensions.contains(ext)) {
                found.append(path)
            }
        }
    }

    /// The scalar variables of one file (a YAML or JSON mapping), each with its line; problems
    /// go to `diagnostics` and leave the file's variables out, as Ansible would refuse the file.
    func read(_ path: String, diagnostics: inout [InventoryDiagnostic]) -> [String: InventoryVariable] {
        var log = DiagnosticLog(file: path)
        defer { diagnostics += log.diagnostics }
        let bytes: [UInt8]
        do {
            bytes = try InventoryFile.read(path, limit: maxFileBytes)
        } catch {
            log.error(1, "\(error.problem ?? error.description); its variables are not used")
            return [:]
        }
        if InventoryFile.isBinary(bytes) {
            log.error(1, "binary data, not a variables file; its variables are not used")
            return [:]
        }
        let contents = String(decoding: bytes, as: UTF8.self)
        if contents.hasPrefix("$ANSIBLE_VAULT;") {
            log.warning(1, "encrypted with ansible-vault, which fleettrust cannot open; its variables are not used")
            return [:]
        }
        guard let root = AnsibleYAMLReader.compose(contents, log: &log), root.null == nil else { return [:] }
        guard case .mapping(let mapping) = root else {
            log.error(root.mark?.line ?? 1, "a variables file must be a mapping of names to values; its variables are not used")
            return [:]
        }
        var vars: [String: InventoryVariable] = [:]
        for (key, value) in mapping.prefix(AnsibleYAMLReader.maxNodes) {
            let line = key.mark?.line ?? 1
            guard let name = AnsibleYAMLReader.scalar(key),
                  let text = AnsibleVariableValue.text(name, value, line: line, log: &log) else { continue }
            vars[name] = InventoryVariable(value: text, location: log.location(line))
        }
        return vars
    }
}
