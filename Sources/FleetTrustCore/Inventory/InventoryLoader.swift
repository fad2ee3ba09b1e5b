import Dispatch

/// Reads what `--inventory` names as Ansible would read the same path: a file, a directory of
/// inventories with `group_vars/` and `host_vars/`, a dynamic inventory script, or standard input.
///
/// Each path given is one source; the files and scripts of one directory make one Ansible
/// inventory together (one group tree, variables merged by Ansible's precedence). Several paths
/// are merged as `Inventory.read` merges several files: a host named twice keeps its first
/// definition. Problems inside files are diagnostics; a path that cannot be read at all throws.
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
        var result = Inventory()
        for path in paths {
            result.append(try await load(path), options: options)
        }
        return result
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

    private func load(_ path: String) async throws(InventoryLoadError) -> Inventory {
        if path == "-" {
            let bytes = try InventoryFile.readStandardInput(limit: maxFileBytes)
            guard !InventoryFile.isBinary(bytes) else { throw .binary(path: "<stdin>") }
            return Inventory.read(InventorySource(name: "<stdin>", bytes: bytes), format: format, options: options)
        }
        let kind = try InventoryFile.kind(path)
        if kind == .directory { return try await loadDirectory(path) }
        if kind == .executable && InventoryFile.isProgram(path) {
            var inventory = AnsibleInventoryBuilder(loader: self)
            try await inventory.addScript(path)
            return inventory.finish(varsDirectory: InventoryFile.directory(of: path))
        }
        let bytes = try InventoryFile.read(path, limit: maxFileBytes)
        guard !InventoryFile.isBinary(bytes) else { throw .binary(path: path) }
        guard kind == .executable || !InventoryFile.hasShebang(bytes) else { throw .scriptNotExecutable(path: path) }
        let contents = String(decoding: bytes, as: UTF8.self)
        let detected = format ?? InventoryFormat.detect(contents)
        guard [.ansibleINI, .ansibleYAML, .ansibleJSON].contains(detected) else {
            return Inventory.read(InventorySource(name: path, bytes: bytes), format: detected, options: options)
        }
        var inventory = AnsibleInventoryBuilder(loader: self)
        inventory.addFile(path, contents: contents, format: detected)
        return inventory.finish(varsDirectory: InventoryFile.directory(of: path))
    }

    private func loadDirectory(_ path: String) async throws(InventoryLoadError) -> Inventory {
        if let format, ![.ansibleINI, .ansibleYAML, .ansibleJSON].contains(format) {
            throw .formatNotForDirectory(path: path, format: format)
        }
        let (files, problems) = try AnsibleInventoryDirectory.inventoryFiles(in: path)
        guard !files.isEmpty else { throw .noInventoryFiles(path: path) }
        var inventory = AnsibleInventoryBuilder(loader: self)
        inventory.diagnostics = problems
        for file in files {
            try await inventory.addDirectoryEntry(file)
        }
        return inventory.finish(varsDirectory: path)
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
