/// One Ansible inventory assembled from files and scripts into one group tree, then given the
/// variables of `group_vars/` and `host_vars/` and resolved: what Ansible's `InventoryManager`
/// builds from its `-i` sources (several sources make one inventory, as `ansible-inventory -i A -i B`).
struct AnsibleInventoryBuilder {
    let loader: InventoryLoader
    private var model = AnsibleInventoryModel()
    var diagnostics: [InventoryDiagnostic] = []
    private var skipped = 0

    init(loader: InventoryLoader) {
        self.loader = loader
    }

    /// Adds one inventory file whose format is known.
    mutating func addFile(_ path: String, contents: String, format: InventoryFormat) {
        var log = DiagnosticLog(file: path)
        switch format {
        case .ansibleJSON:
            AnsibleInventoryJSONReader.read(contents, into: &model, options: loader.options, log: &log,
                                            detected: loader.format == nil)
        case .ansibleYAML:
            AnsibleYAMLReader.read(contents, into: &model, options: loader.options, log: &log)
        default:
            AnsibleINIReader.read(contents, into: &model, options: loader.options, log: &log)
        }
        absorb(log)
    }

    /// Runs a dynamic inventory script with `--list` (and `--host NAME` for every host when its
    /// output has no `_meta`) and adds what it printed. Any failure of the script ends the load.
    mutating func addScript(_ path: String) async throws(InventoryLoadError) {
        let script = InventoryScript(path: path, limits: loader.scriptLimits)
        let contents = String(decoding: try await script.run(["--list"]), as: UTF8.self)
        guard InventoryFormat.detect(contents) == .ansibleJSON else {
            throw .scriptOutputNotJSON(path: path, arguments: ["--list"], start: Self.opening(contents))
        }
        var log = DiagnosticLog(file: "\(path) --list")
        let needingVars = AnsibleInventoryJSONReader.read(contents, into: &model, options: loader.options, log: &log, detected: false)
        absorb(log)
        for host in needingVars {
            let arguments = ["--host", host]
            let text = String(decoding: try await script.run(arguments), as: UTF8.self)
            guard !text.allSatisfy(\.isWhitespace) else { continue }
            guard InventoryFormat.detect(text) == .ansibleJSON else {
                throw .scriptOutputNotJSON(path: path, arguments: arguments, start: Self.opening(text))
            }
            var hostLog = DiagnosticLog(file: "\(path) --host \(Sanitizer.clean(host, limit: 80))")
            if let root = AnsibleYAMLReader.compose(text, log: &hostLog) {
                AnsibleInventoryJSONReader.readHostVars(host, root, into: &model, log: &hostLog)
            }
            absorb(hostLog)
        }
    }

    /// Adds one entry of an inventory directory as Ansible's plugins would take it: an
    /// executable program is run; a file is read in its format. A file that cannot be read is
    /// reported and skipped, as Ansible skips a source no plugin can parse; a script that fails
    /// ends the load.
    mutating func addDirectoryEntry(_ path: String) async throws(InventoryLoadError) {
        let kind: InventoryFile.Kind
        let bytes: [UInt8]
        do {
            kind = try InventoryFile.kind(path)
            if kind == .executable && InventoryFile.isProgram(path) {
                try await addScript(path)
                return
            }
            bytes = try InventoryFile.read(path, limit: loader.maxFileBytes)
        } catch let error where error.problem != nil {
            diagnostics.append(InventoryDiagnostic(.error, SourceLocation(file: path, line: 1), "\(error.problem!); skipped"))
            return
        }
        let location = SourceLocation(file: path, line: 1)
        if InventoryFile.isBinary(bytes) {
            diagnostics.append(InventoryDiagnostic(.error, location, "binary data, not an inventory; skipped"))
        } else if InventoryFile.hasShebang(bytes) {
            diagnostics.append(InventoryDiagnostic(.error, location, "a script (it starts with #!) without the execute bit, so it is not run; make it executable to use it as a dynamic inventory; skipped"))
        } else if AnsibleInventoryDirectory.pythonExtension(path.split(separator: "/").last.map(String.init) ?? path) == ".toml" {
            diagnostics.append(InventoryDiagnostic(.error, location, "TOML inventories are not read by fleettrust; give it the output of `ansible-inventory -i FILE --list` instead; skipped"))
        } else {
            let contents = String(decoding: bytes, as: UTF8.self)
            addFile(path, contents: contents, format: AnsibleInventoryDirectory.format(ofFile: path, contents: contents, forced: loader.format))
        }
    }

    /// Reads `group_vars/` and `host_vars/` in each of `varsDirectories` (one per source, in the
    /// order of the sources: a later source's files win, as Ansible's `host_group_vars` combines
    /// them) and resolves every host.
    mutating func finish(varsDirectories: [String]) -> Inventory {
        for directory in varsDirectories {
            AnsibleVarsFiles(baseDirectory: directory, options: loader.options, maxFileBytes: loader.maxFileBytes)
                .apply(to: &model, diagnostics: &diagnostics)
        }
        var log = DiagnosticLog(file: varsDirectories.last ?? ".")
        let hosts = model.hosts(options: loader.options, log: &log)
        absorb(log)
        var inventory = Inventory(diagnostics: diagnostics, skipped: skipped)
        inventory.append(Inventory(hosts: hosts), options: loader.options)
        return inventory
    }

    /// The first words of a script's output, for a message.
    private static func opening(_ text: String) -> String {
        var start = text.drop(while: \.isWhitespace).prefix(40)
        while start.last?.isWhitespace == true { start = start.dropLast() }
        return String(start)
    }

    private mutating func absorb(_ log: DiagnosticLog) {
        diagnostics += log.diagnostics
        skipped += log.skipped
    }
}
