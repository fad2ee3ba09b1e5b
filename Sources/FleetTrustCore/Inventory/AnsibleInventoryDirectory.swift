import Foundation

/// Ansible's rules for which files of an inventory directory are inventories, so that
/// `--inventory DIR` reads exactly the files `ansible -i DIR` reads (`inventory/manager.py`).
///
/// Every entry is read, in the byte order of names, descending into subdirectories, except hidden
/// names, `group_vars`, `host_vars`, `vars_plugins`, and names ending in one of the extensions of
/// Ansible's default `INVENTORY_IGNORE_EXTS`. An executable file is a dynamic inventory script.
/// Settings that change these rules in `ansible.cfg` are not read.
enum AnsibleInventoryDirectory {
    /// `REJECT_EXTS` plus `.orig`, `.cfg`, `.retry`, matched at the end of the name.
    static let ignoredEndings = [".pyc", ".pyo", ".swp", ".bak", "~", ".rpm", ".md", ".txt", ".rst", ".orig", ".cfg", ".retry"]
    static let ignoredNames: Set<String> = ["group_vars", "host_vars", "vars_plugins"]
    /// Deeper nesting is reported and not read: a bound against symbolic-link loops.
    static let maxDepth = 16
    static let maxFiles = 10_000

    /// Whether Ansible skips an entry of an inventory directory.
    static func isIgnored(_ name: String) -> Bool {
        name.hasPrefix(".") || ignoredNames.contains(name) || ignoredEndings.contains { name.hasSuffix($0) }
    }

    /// The inventory files under `directory`, in the order Ansible reads them. Subdirectories
    /// that cannot be listed are reported in `problems` and left out.
    static func inventoryFiles(in directory: String) throws(InventoryLoadError) -> (files: [String], problems: [InventoryDiagnostic]) {
        var files: [String] = []
        var problems: [InventoryDiagnostic] = []
        var visited = Set<[UInt64]>()
        try walk(directory, depth: 0, top: true, files: &files, problems: &problems, visited: &visited)
        return (files, problems)
    }

    private static func walk(_ directory: String, depth: Int, top: Bool, files: inout [String],
                             problems: inout [InventoryDiagnostic], visited: inout Set<[UInt64]>) throws(InventoryLoadError) {
        var info = stat()
        if stat(directory, &info) == 0 {
            guard visited.insert([UInt64(info.st_dev), UInt64(info.st_ino)]).inserted else {
                problems.append(InventoryDiagnostic(.warning, SourceLocation(file: directory, line: 1),
                                                    "this directory was already read (a symbolic link loop?); skipped"))
                return
            }
        }
        let names: [String]
        do {
            names = try entries(of: directory)
        } catch {
            if top { throw error }
            problems.append(InventoryDiagnostic(.error, SourceLocation(file: directory, line: 1), "\(error.problem ?? error.description); skipped"))
            return
        }
        for name in names where !isIgnored(name) {
            let path = InventoryFile.join(directory, name)
            guard files.count < maxFiles else {
                problems.append(InventoryDiagnostic(.error, SourceLocation(file: path, line: 1),
                                                    "more than \(maxFiles) inventory files; the rest are skipped"))
                return
            }
            if (try? InventoryFile.kind(path)) == .directory {
                guard depth < maxDepth else {
                    problems.append(InventoryDiagnostic(.error, SourceLocation(file: path, line: 1),
                                                        "nested more than \(maxDepth) directories deep; skipped"))
                    continue
                }
                try walk(path, depth: depth + 1, top: false, files: &files, problems: &problems, visited: &visited)
            } else {
                files.append(path)
            }
        }
    }

    /// The names in a directory in Python's `sorted(os.listdir(...))` order, without `.` and `..`.
    static func entries(of directory: String) throws(InventoryLoadError) -> [String] {
        guard let handle = opendir(directory) else { throw InventoryFile.failure(directory, errno) }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted(by: AnsibleInventoryModel.precedes)
    }

    /// The Ansible format of one file in an inventory directory, as Ansible's plugins would take
    /// it: the YAML plugin tries files with no extension or `.yml`, `.yaml`, `.json` first, and
    /// the INI plugin reads everything else (a plain host list reads the same as INI).
    static func format(ofFile path: String, contents: String, forced: InventoryFormat?) -> InventoryFormat {
        if let forced { return forced }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let ext = pythonExtension(name)
        guard ext.isEmpty || [".yml", ".yaml", ".json"].contains(ext) else { return .ansibleINI }
        let detected = InventoryFormat.detect(contents)
        return detected == .ansibleYAML || detected == .ansibleJSON ? detected : .ansibleINI
    }

    /// Python's `os.path.splitext(name)[1]`: from the last dot, leading dots not counting.
    static func pythonExtension(_ name: String) -> String {
        let body = name.drop { $0 == "." }
        guard let dot = body.lastIndex(of: ".") else { return "" }
        return String(body[dot...])
    }
}
