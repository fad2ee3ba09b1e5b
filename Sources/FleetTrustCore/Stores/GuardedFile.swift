#if canImport(Glibc)
import Glibc
#endif

/// A user's file (known_hosts, a pin file) edited so that no byte is ever lost or half-written.
///
/// Every write is a new copy in the same directory (exclusive random name, fsync, the
/// original's mode and owner) renamed over the target, then the directory is fsynced: a
/// crash leaves the old file or the new one, never a mix. The write goes through symbolic
/// links to their target and leaves the links in place, as OpenSSH users expect.
///
/// Concurrency has two kinds of writer. Other fleettrust processes take an exclusive
/// `flock` on the file's *directory* (its inode, unlike the file's, survives the rename,
/// and locking it needs no extra lock file in `~/.ssh`). The real `ssh` appends new hosts
/// with no lock at all, so correctness cannot rest on the lock: each attempt re-reads the
/// file, lets the caller's transform merge its edit into what is there now, refuses to
/// rename if the file moved in the meantime, and after the rename checks the replaced inode
/// for lines appended just before it (see `FileSystemCalls.settledContent`); such lines
/// are merged in and the write repeated, a bounded number of times.
///
/// Limits, as with `ssh-keygen -R`, which also replaces the file: extended attributes and
/// ACLs are not copied, and a file with several hard links is split from the others. A
/// writer that rewrites the file in place without our lock (not an append) is not merged.
public struct GuardedFile: Sendable {
    /// Decides the new content. Gets the snapshot the caller planned from and the bytes the
    /// file holds now (other writers' changes included); throws (typically
    /// `StoreError.conflict`) to refuse, returns `current` unchanged to write nothing.
    /// It may be called more than once (once per attempt), so it must not have side effects.
    public typealias Transform = (_ planned: FileSnapshot, _ current: [UInt8]) throws -> [UInt8]

    public let path: String
    /// Mode requested for a file the first write creates, before the umask applies. The
    /// default 0666 gives what `ssh` gives a new known_hosts (it creates it with
    /// `fopen(…, "a")`): 0644 under the usual umask 022, 0600 under 077.
    public var newFileMode: mode_t
    /// How long a write waits for another writer's lock before it gives up.
    public var lockWait: Duration = .seconds(10)
    static let maximumAttempts = 8

    public init(path: String, newFileMode: mode_t = 0o666) {
        self.path = path
        self.newFileMode = newFileMode
    }

    public func read() throws -> FileSnapshot {
        let target = try FileSystemCalls.resolveSymlinks(path)
        let current = try Current.open(target, reportedAs: path)
        defer { current.close() }
        return FileSnapshot(path: path, resolvedPath: target, bytes: current.bytes, identity: current.identity)
    }

    /// Applies `transform` to the file's current content and saves the result; returns what
    /// was saved. On any error the file is as it was and no temporary file is left.
    @discardableResult
    public func update(from snapshot: FileSnapshot, _ transform: Transform) throws -> FileSnapshot {
        try apply { current in try transform(snapshot, current) }
    }

    /// As `update(from:_:)`, for callers that keep their own parsed snapshot to compare with.
    @discardableResult
    public func update(_ transform: (_ current: [UInt8]) throws -> [UInt8]) throws -> FileSnapshot {
        try apply(transform)
    }

    /// `flock` with a bounded wait: another fleettrust stuck holding the lock must not hang this one.
    private func lock(_ fd: Int32, directory: String, for path: String) throws {
        let deadline = ContinuousClock.now + lockWait
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                throw StoreError.system(path: directory, operation: "flock", errno: errno)
            }
            guard ContinuousClock.now < deadline else {
                throw StoreError.lockTimeout(path: path, seconds: Int(lockWait.components.seconds))
            }
            usleep(20_000)
        }
    }

    private func apply(_ transform: (_ current: [UInt8]) throws -> [UInt8]) throws -> FileSnapshot {
        let target = try FileSystemCalls.resolveSymlinks(path)
        let directory = FileSystemCalls.directory(of: target)
        try FileSystemCalls.ensureDirectory(directory)
        let directoryFD = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryFD >= 0 else {
            throw StoreError.from(errno: errno, path: path, directory: directory, operation: "open directory")
        }
        defer { Glibc.close(directoryFD) }
        try lock(directoryFD, directory: directory, for: path)

        var merged: (others: [UInt8], late: [UInt8], written: [UInt8])?
        var refusal: Error?
        for _ in 0..<Self.maximumAttempts {
            let current = try Current.open(target, reportedAs: path)
            defer { current.close() }
            let others: [UInt8]
            if let merged {
                others = current.bytes.starts(with: merged.written)
                    ? merged.others + merged.late + current.bytes[merged.written.count...]
                    : current.bytes + merged.late
            } else {
                others = current.bytes
            }
            var result: [UInt8]
            do {
                result = try transform(others)
            } catch {
                // A refusal found only after an earlier attempt was renamed into place:
                // put back everyone else's bytes without ours, then report it.
                guard merged != nil else { throw error }
                refusal = error
                result = others
            }
            if result == current.bytes {
                if let refusal { throw refusal }
                return FileSnapshot(path: path, resolvedPath: target, bytes: current.bytes, identity: current.identity)
            }
            if let identity = current.identity { try Self.checkWritable(identity, path: path) }
            let temporary = try writeTemporary(result, like: current.identity, for: target)
            guard current.isStillInPlace(at: target) else {
                unlink(temporary)
                continue
            }
            guard try install(temporary, at: target, replacing: current.identity != nil) else { continue }
            _ = fsync(directoryFD)
            if current.fd >= 0 {
                let after = try FileSystemCalls.settledContent(current.fd, path: path)
                if after != current.bytes, after.starts(with: current.bytes) {
                    merged = (others, Array(after[current.bytes.count...]), result)
                    continue
                }
            }
            if let refusal { throw refusal }
            let identity = FileSystemCalls.pathStatus(target).map(FileIdentity.init)
            return FileSnapshot(path: path, resolvedPath: target, bytes: result, identity: identity)
        }
        throw StoreError.tooManyRetries(path: path)
    }

    /// A file without any write permission is the user's clear "do not touch", even where
    /// the directory (or being root) would let us replace it.
    static func checkWritable(_ identity: FileIdentity, path: String) throws {
        let writeBits = UInt32(S_IWUSR | S_IWGRP | S_IWOTH)
        if geteuid() == 0 {
            if identity.mode & writeBits == 0 { throw StoreError.readOnly(path: path) }
        } else if identity.owner == geteuid() {
            if identity.mode & UInt32(S_IWUSR) == 0 { throw StoreError.readOnly(path: path) }
        } else if access(path, W_OK) != 0 {
            throw StoreError.permissionDenied(path: path)
        }
    }

    private func writeTemporary(_ bytes: [UInt8], like original: FileIdentity?, for target: String) throws -> String {
        let directory = FileSystemCalls.directory(of: target)
        let name = FileSystemCalls.temporaryName(for: target)
        let fd = Glibc.open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, original == nil ? newFileMode : 0o600)
        guard fd >= 0 else {
            throw StoreError.from(errno: errno, path: path, directory: directory, operation: "create temporary file")
        }
        func fail(_ code: Int32, _ operation: String) -> StoreError {
            Glibc.close(fd)
            unlink(name)
            return StoreError.from(errno: code, path: path, directory: directory, operation: operation)
        }
        if let code = FileSystemCalls.writeAll(fd, bytes) { throw fail(code, "write") }
        if let original, let failure = FileSystemCalls.keepOwnerAndMode(fd, of: original) {
            throw fail(failure.errno, failure.operation)
        }
        if fsync(fd) != 0 { throw fail(errno, "fsync") }
        if Glibc.close(fd) != 0 {
            let code = errno
            unlink(name)
            throw StoreError.from(errno: code, path: path, directory: directory, operation: "write")
        }
        return name
    }

    /// Renames over an existing file; creates a missing one with `link`, which, unlike
    /// `rename`, fails rather than replace a file someone created meanwhile (then returns
    /// false: read again). File systems without hard links fall back to `rename`.
    private func install(_ temporary: String, at target: String, replacing: Bool) throws -> Bool {
        var code: Int32 = 0
        if !replacing {
            if link(temporary, target) == 0 {
                unlink(temporary)
                return true
            }
            code = errno
            if code == EEXIST {
                unlink(temporary)
                return false
            }
        }
        if replacing || code == EPERM || code == ENOSYS || code == EOPNOTSUPP {
            if rename(temporary, target) == 0 { return true }
            code = errno
        }
        unlink(temporary)
        throw StoreError.from(errno: code, path: path, directory: FileSystemCalls.directory(of: target), operation: "rename")
    }
}

/// The file as found at the start of one write attempt, kept open so its inode can be
/// watched after the rename.
private struct Current {
    var fd: Int32
    var bytes: [UInt8]
    var identity: FileIdentity?

    static func open(_ target: String, reportedAs path: String) throws -> Current {
        let fd = Glibc.open(target, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            switch errno {
            case ENOENT: return Current(fd: -1, bytes: [], identity: nil)
            case EACCES, EPERM: throw StoreError.permissionDenied(path: path)
            default: throw StoreError.from(errno: errno, path: path, directory: FileSystemCalls.directory(of: target),
                                           operation: "open")
            }
        }
        guard let s = FileSystemCalls.fileStatus(fd), s.st_mode & S_IFMT == S_IFREG else {
            Glibc.close(fd)
            throw StoreError.notRegularFile(path: path)
        }
        do {
            let bytes = try FileSystemCalls.readAll(fd, path: path)
            return Current(fd: fd, bytes: bytes, identity: FileIdentity(FileSystemCalls.fileStatus(fd) ?? s))
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    /// Whether the path still names the inode we read, at the size we read.
    func isStillInPlace(at target: String) -> Bool {
        guard let identity else { return FileSystemCalls.pathStatus(target) == nil }
        guard let now = FileSystemCalls.pathStatus(target), let open = FileSystemCalls.fileStatus(fd) else { return false }
        return FileIdentity(now).isUnchanged(comparedTo: identity)
            && FileIdentity(open).isUnchanged(comparedTo: identity) && Int64(bytes.count) == identity.size
    }

    func close() { if fd >= 0 { Glibc.close(fd) } }
}
