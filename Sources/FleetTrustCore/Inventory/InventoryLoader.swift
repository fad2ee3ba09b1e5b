import Dispatch

/// Reads what `--inventory` names as Ansible would read the same path: a file, a directory of
/// inventories with `group_vars/` and `host_vars/`, a dynamic inventory script, or standard input.
///
/// Each path given is one source; the files and scripts of one directory make one Ansible
/// inventory together (one group tree, variables merged by Ansible's precedence). Several Ansible
/// paths (INI, YAML, JSON, directories, scripts) make one inventory too, as `ansible-inventory -i A
/// -i B` builds it: groups merge, and a later source's variables (and `group_vars/`) win. Plain
/// lists, ssh_configs and standard input are added after it as `Inventory.read` merges files: a
/// host named twice keeps its first definition. Problems inside files are diagnostics; a path
/// that cannot be read at all throws.
public struct InventoryLoader: Sendable {
    /// `--inventory-format`, or `nil` to detect each file's format.
    public var format: InventoryFormat?
    public var options: InventoryReadOptions
    public var scriptLimits: InventoryScript.Limits
    /// The largest inventory or variables file read (standard input included).
    public var maxFileBytes: Int

    public init(format: InventoryFormat? = nil, options: InventoryReadOptions = InventoryReadOptions(),
                scriptLimits: InventoryScript.Limits = InventoryScript.Limits(), maxFileBytes: Int = 64 << 20) {
        self.format = format
        self.options = options
        self.scriptLimits = scriptLimits
        self.maxFileBytes = maxFileBytes
    }

    /// Reads every path in order (`-` is standard input) into one inventory.
    public func load(_ paths: [String]) async throws(InventoryLoadError) -> Inventory {
        var ansible = AnsibleInventoryBuilder(loader: self)
        var varsDirectories: [String] = []
        var others = Inventory()
        for path in paths {
            switch try await add(path, to: &ansible) {
            case .ansible(let varsDirectory): varsDirectories.append(varsDirectory)
            case .other(let inventory): others.append(inventory, options: options)
            }
        }
        var result = varsDirectories.isEmpty ? Inventory() : ansible.finish(varsDirectories: varsDirectories)
        result.append(others, options: options)
        result.noteRefusals()
        return result
    }

    private enum Source {
        /// Added to the shared Ansible inventory; its `group_vars/` and `host_vars/` are read here.
        case ansible(varsDirectory: String)
        /// Standard input, a plain list or an ssh_config, read on its own.
        case other(Inventory)
    }

    /// Adds `path` to the shared Ansible inventory when it is an Ansible source; reads any other
    /// source on its own (each path is read once: it may be a pipe).
    private func add(_ path: String, to inventory: inout AnsibleInventoryBuilder) async throws(InventoryLoadError) -> Source {
        if path == "-" {
            let bytes = try InventoryFile.readStandardInput(limit: maxFileBytes)
            guard !InventoryFile.isBinary(bytes) else { throw .binary(path: "<stdin>") }
            return .other(Inventory.read(InventorySource(name: "<stdin>", bytes: bytes), format: format, options: options))
        }
        let kind = try InventoryFile.kind(path)
        if kind == .directory {
            try await addDirectory(path, to: &inventory)
            return .ansible(varsDirectory: path)
        }
        if kind == .executable && InventoryFile.isProgram(path) {
            try await inventory.addScript(path)
            return .ansible(varsDirectory: InventoryFile.directory(of: path))
        }
        let bytes = try InventoryFile.read(path, limit: maxFileBytes)
        guard !InventoryFile.isBinary(bytes) else { throw .binary(path: path) }
        guard kind == .executable || !InventoryFile.hasShebang(bytes) else { throw .scriptNotExecutable(path: path) }
        let contents = String(decoding: bytes, as: UTF8.self)
        let detected = format ?? InventoryFormat.detect(contents)
        guard [.ansibleINI, .ansibleYAML, .ansibleJSON].contains(detected) else {
            return .other(Inventory.read(InventorySource(name: path, bytes: bytes), format: detected, options: options))
        }
        inventory.addFile(path, contents: contents, format: detected)
        return .ansible(varsDirectory: InventoryFile.directory(of: path))
    }

    /// `load`, for synchronous callers: waits for it on a thread of its own, so it neither needs
    /// nor starves Swift's cooperative threads even when the caller holds one.
    public func loadWaiting(_ paths: [String]) throws(InventoryLoadError) -> Inventory {
        let box = ResultBox()
        let done = DispatchSemaphore(value: 0)
        Task.detached(executorPreference: DispatchTaskExecutor.shared) { [self] in
            do throws(InventoryLoadError) {
                box.result = .success(try await load(paths))
            } catch {
                box.result = .failure(error)
            }
            done.signal()
        }
        done.wait()
        return try box.result!.get()
    }

    private func addDirectory(_ path: String, to inventory: inout AnsibleInventoryBuilder) async throws(InventoryLoadError) {
        if let format, ![.ansibleINI, .ansibleYAML, .ansibleJSON].contains(format) {
            throw .formatNotForDirectory(path: path, format: format)
        }
        let (files, problems) = try AnsibleInventoryDirectory.inventoryFiles(in: path)
        guard !files.isEmpty else { throw .noInventoryFiles(path: path) }
        inventory.diagnostics += problems
        for file in files {
            try await inventory.addDirectoryEntry(file)
        }
    }
}

/// Where a detached task leaves its result for the thread waiting on it.
private final class ResultBox: @unchecked Sendable {
    var result: Result<Inventory, InventoryLoadError>?
}

/// Runs jobs on Dispatch's own threads, for work a synchronous caller blocks on.
private final class DispatchTaskExecutor: TaskExecutor, @unchecked Sendable {
    static let shared = DispatchTaskExecutor()
    private let queue = DispatchQueue(label: "fleettrust.inventory-loader", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
