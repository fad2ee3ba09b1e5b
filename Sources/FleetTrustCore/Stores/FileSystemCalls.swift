import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The few POSIX calls `GuardedFile` needs, each retrying on EINTR and throwing `StoreError`.
public enum FileSystemCalls {
    static let maximumSymlinkDepth = 40
    private static let setLease: Int32 = 1024, getLease: Int32 = 1025, setSignal: Int32 = 10

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func lastComponent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// Follows symbolic links in the last component, as `open` would, even when the final
    /// target does not exist yet; so a linked known_hosts is written through and the link kept.
    /// A link that another user made in a sticky world-writable directory (`/tmp`) is refused, as
    /// the kernel's `protected_symlinks` refuses it to `open`: following it here, in user space,
    /// would let that user point `--output` or the history at any file the scanning user may write.
    static func resolveSymlinks(_ path: String) throws -> String {
        var current = path
        for _ in 0..<maximumSymlinkDepth {
            var s = stat()
            guard lstat(current, &s) == 0 else {
                if errno == ENOENT || errno == ENOTDIR { return current }
                throw StoreError.from(errno: errno, path: path, directory: directory(of: current), operation: "lstat")
            }
            guard s.st_mode & S_IFMT == S_IFLNK else { return current }
            var parent = stat()
            if stat(directory(of: current), &parent) == 0, parent.st_mode & S_ISVTX != 0, parent.st_mode & S_IWOTH != 0,
               s.st_uid != geteuid(), s.st_uid != parent.st_uid {
                throw StoreError.untrustedSymlink(path: path, link: current)
            }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let n = readlink(current, &buffer, Int(PATH_MAX))
            guard n >= 0 else {
                throw StoreError.system(path: current, operation: "readlink", errno: errno)
            }
            let target = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current = target.hasPrefix("/") ? target : directory(of: current) + "/" + target
        }
        throw StoreError.symlinkLoop(path: path)
    }

    /// Creates the last missing directory (mode 0700, like `~/.ssh`); refuses to create more.
    static func ensureDirectory(_ directory: String) throws {
        var s = stat()
        if stat(directory, &s) == 0 {
            guard s.st_mode & S_IFMT == S_IFDIR else { throw StoreError.missingDirectory(path: directory) }
            return
        }
        guard errno == ENOENT else {
            throw StoreError.from(errno: errno, path: directory, directory: directory, operation: "stat")
        }
        let parent = Self.directory(of: directory)
        guard stat(parent, &s) == 0, s.st_mode & S_IFMT == S_IFDIR else {
            throw StoreError.missingDirectory(path: parent)
        }
        guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
            throw StoreError.from(errno: errno, path: directory, directory: parent, operation: "create temporary file")
        }
    }

    /// A fresh hidden name beside `target` for the copy that will replace it.
    static func temporaryName(for target: String) -> String {
        "\(directory(of: target))/.\(lastComponent(of: target)).fleettrust-\(String(UInt64.random(in: 0...UInt64.max), radix: 36))"
    }

    /// Gives a new copy the owner and mode of the file it replaces; nil when done, else the
    /// failing step and its errno.
    static func keepOwnerAndMode(_ fd: Int32, of original: FileIdentity) -> (operation: String, errno: Int32)? {
        if let made = fileStatus(fd), made.st_uid != original.owner || made.st_gid != original.group,
           fchown(fd, original.owner, original.group) != 0 {
            return ("keep owner", errno)
        }
        if fchmod(fd, mode_t(original.mode) & 0o7777) != 0 { return ("keep mode", errno) }
        return nil
    }

    static func readAll(_ fd: Int32, path: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(bytes.count)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw StoreError.system(path: path, operation: "read", errno: errno)
            }
            if n == 0 { return bytes }
            bytes.append(contentsOf: chunk[..<n])
        }
    }

    /// A path as the file system names it (`.`/`..` gone, symbolic links followed), so two
    /// spellings of one file compare equal.
    public static func canonicalPath(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
    }

    /// Writes all of `bytes`; nil when it all went in, else the errno that stopped it (a write
    /// that makes no progress counts as ENOSPC, so a full disk never loops).
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                return errno
            }
            if n == 0 { return ENOSPC }
            offset += n
        }
        return nil
    }

    static func fileStatus(_ fd: Int32) -> stat? {
        var s = stat()
        return fstat(fd, &s) == 0 ? s : nil
    }

    static func pathStatus(_ path: String) -> stat? {
        var s = stat()
        return stat(path, &s) == 0 ? s : nil
    }

    /// How long a write waits, after its rename, for a process that holds the replaced copy
    /// open for writing to close it (`writerWait`); past it the bytes are read as they are.
    static let writerWait = 10_000

    /// Waits until no other process may still write to the (now unlinked) inode, then reads it.
    ///
    /// `ssh` appends to known_hosts without any lock: one that opened the old file just before
    /// our rename may still be writing to it, a moment or seconds later (a slow disk, a stopped
    /// process). A write lease can be taken only while nobody else has the file open, and it is
    /// broken by anyone opening it, so holding one while reading proves the bytes read are final.
    /// When it cannot be had after a short pause (someone still has the file open, or leases are
    /// unavailable: not the owner, some network file systems), the holders are looked up
    /// (`InodeWriters`): readers (a pager, `tail -f`) are not waited for; a process holding it
    /// open for writing is, up to `writerWait`, and whatever it appended is then carried over
    /// by the caller.
    static func settledContent(_ fd: Int32, path: String) throws -> [UInt8] {
        _ = fcntl(fd, setSignal, SIGURG)
        let start = monotonicMilliseconds()
        var leases = true
        while true {
            if leases {
                if fcntl(fd, setLease, Int32(F_WRLCK)) == 0 {
                    let bytes = try readAll(fd, path: path)
                    let held = fcntl(fd, getLease)
                    _ = fcntl(fd, setLease, Int32(F_UNLCK))
                    if held == Int32(F_WRLCK) { return bytes }
                    continue
                }
                leases = errno == EAGAIN || errno == EINTR
            }
            let elapsed = monotonicMilliseconds() - start
            if elapsed >= (leases ? 250 : 20) {
                guard elapsed < writerWait, !InodeWriters.holding(fd).isEmpty else { return try readAll(fd, path: path) }
                usleep(10_000)
            } else {
                usleep(1_000)
            }
        }
    }

    static func monotonicMilliseconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return now.tv_sec * 1_000 + now.tv_nsec / 1_000_000
    }
}
