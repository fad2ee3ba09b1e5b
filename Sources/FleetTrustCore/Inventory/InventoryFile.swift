import Foundation

/// One path given as an inventory, looked at with the system calls themselves so that every
/// failure carries the real `errno` (Foundation's `contents(atPath:)` loses it).
enum InventoryFile {
    enum Kind: Equatable {
        case directory
        /// A regular file with an execute bit the caller may use: a dynamic inventory script.
        case executable
        /// Anything else that can be read: a regular file, a pipe (`<(command)`), a device.
        case readable
    }

    /// What `path` is, following symbolic links as Ansible's `os.path.isdir` and `os.access` do.
    static func kind(_ path: String) throws(InventoryLoadError) -> Kind {
        var info = stat()
        guard stat(path, &info) == 0 else { throw failure(path, errno) }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: return .directory
        case S_IFREG: return access(path, X_OK) == 0 ? .executable : .readable
        default: return .readable
        }
    }

    /// The whole of `path` (which may be a pipe), refusing more than `limit` bytes; or only its
    /// first `prefix` bytes.
    static func read(_ path: String, limit: Int, prefix: Int? = nil) throws(InventoryLoadError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure(path, errno) }
        defer { close(descriptor) }
        return try read(descriptor: descriptor, name: path, limit: limit, prefix: prefix)
    }

    /// Standard input (`--inventory -`), refusing more than `limit` bytes.
    static func readStandardInput(limit: Int) throws(InventoryLoadError) -> [UInt8] {
        try read(descriptor: STDIN_FILENO, name: "<stdin>", limit: limit, prefix: nil)
    }

    private static func read(descriptor: Int32, name: String, limit: Int, prefix: Int?) throws(InventoryLoadError) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while prefix.map({ bytes.count < $0 }) ?? true {
            let wanted = min(chunk.count, prefix.map { $0 - bytes.count } ?? chunk.count)
            let count = chunk.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress, wanted) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure(name, errno)
            }
            if count == 0 { return bytes }
            guard bytes.count + count <= limit else { throw .tooLarge(path: name, limit: limit) }
            bytes += chunk[0..<count]
        }
        return bytes
    }

    /// Whether bytes are binary data rather than text: a NUL byte near the start, as `grep` and
    /// `git` decide. No inventory format allows one.
    static func isBinary(_ bytes: [UInt8]) -> Bool {
        bytes.prefix(1 << 16).contains(0)
    }

    /// Whether a file starts with `#!`: a script, even when its execute bit is missing.
    static func hasShebang(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: [UInt8(ascii: "#"), UInt8(ascii: "!")])
    }

    /// Whether an executable file is a program the system can run (a `#!` script or an ELF
    /// binary). Ansible tries to run any executable and, when that fails, reads the file as an
    /// inventory; a text inventory that merely has an execute bit gets the same treatment here.
    static func isProgram(_ path: String) -> Bool {
        guard let head = try? read(path, limit: .max, prefix: 4) else { return false }
        return hasShebang(head) || head.starts(with: [0x7F, 0x45, 0x4C, 0x46])
    }

    static func failure(_ path: String, _ code: Int32) -> InventoryLoadError {
        switch code {
        case ENOENT: return .missing(path: path)
        case EISDIR: return .unreadable(path: path, reason: "it is a directory")
        default: return .unreadable(path: path, reason: String(cString: strerror(code)))
        }
    }

    /// The directory part of a path, as Python's `os.path.dirname` gives it (`.` for a bare name).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let head = path[..<slash]
        return head.isEmpty ? "/" : String(head.allSatisfy { $0 == "/" } ? "/" : head)
    }

    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
