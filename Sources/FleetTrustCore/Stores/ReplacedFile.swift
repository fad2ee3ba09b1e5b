#if canImport(Glibc)
import Glibc
#endif

/// A file a command replaces as a whole (`--output`), dressed as `GuardedFile` dresses the
/// user's known_hosts: symbolic links followed to their target (the links stay), the new copy
/// given the old file's mode and owner before any byte is written, and renamed over the target.
///
/// The caller streams the content into `descriptor` itself (a report of 10,000 hosts is never held
/// whole), then calls `install`, or `abandon` to leave the target as it was. A file without any
/// write permission is refused as `GuardedFile` refuses it.
public struct ReplacedFile: Sendable {
    /// The path as the user gave it.
    public let path: String
    /// The file that is replaced, after following symbolic links.
    public let resolvedPath: String
    public let descriptor: Int32
    /// The temporary file beside the target (removed by `abandon`, renamed by `install`).
    public let temporary: String

    /// Creates the new copy beside the target. A new file gets `newFileMode` less the umask.
    public init(path: String, newFileMode: mode_t = 0o666) throws {
        let target = try FileSystemCalls.resolveSymlinks(path)
        let directory = FileSystemCalls.directory(of: target)
        var original: FileIdentity?
        if let status = FileSystemCalls.pathStatus(target) {
            guard status.st_mode & S_IFMT == S_IFREG else { throw StoreError.notRegularFile(path: path) }
            original = FileIdentity(status)
            try GuardedFile.checkWritable(original!, path: path)
        }
        var name = "", fd: Int32 = -1
        for _ in 0..<16 where fd < 0 {
            name = FileSystemCalls.temporaryName(for: target)
            fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, original == nil ? newFileMode : 0o600)
            if fd < 0 && errno != EEXIST { break }
        }
        guard fd >= 0 else {
            throw StoreError.from(errno: errno, path: path, directory: directory, operation: "create temporary file")
        }
        if let original, let failure = FileSystemCalls.keepOwnerAndMode(fd, of: original) {
            close(fd)
            unlink(name)
            throw StoreError.from(errno: failure.errno, path: path, directory: directory, operation: failure.operation)
        }
        self.path = path
        resolvedPath = target
        descriptor = fd
        temporary = name
    }

    /// Makes what was written the file's content, at once: fsync, close, rename, fsync of the directory.
    public func install() throws {
        let directory = FileSystemCalls.directory(of: resolvedPath)
        var code: Int32 = 0
        if fsync(descriptor) != 0 { code = errno }
        if close(descriptor) != 0 && code == 0 { code = errno }
        guard code == 0 else {
            unlink(temporary)
            throw StoreError.from(errno: code, path: path, directory: directory, operation: "write")
        }
        guard rename(temporary, resolvedPath) == 0 else {
            code = errno
            unlink(temporary)
            throw StoreError.from(errno: code, path: path, directory: directory, operation: "rename")
        }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            close(directoryFD)
        }
    }

    /// Drops the new copy; the target stays as it was.
    public func abandon() {
        close(descriptor)
        unlink(temporary)
    }
}
