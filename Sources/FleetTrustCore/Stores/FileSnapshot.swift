#if canImport(Glibc)
import Glibc
#endif

/// Which inode a path held, and how it looked, when it was read.
///
/// A change of inode means someone replaced the file (as `ssh-keygen -R` and we do);
/// a change of size or time on the same inode means someone appended or rewrote it in place.
public struct FileIdentity: Equatable, Hashable, Sendable {
    public var device: UInt64
    public var inode: UInt64
    public var size: Int64
    public var modificationNanoseconds: Int64
    public var mode: UInt32
    public var owner: UInt32
    public var group: UInt32

    init(_ s: stat) {
        device = UInt64(s.st_dev)
        inode = UInt64(s.st_ino)
        size = Int64(s.st_size)
        modificationNanoseconds = Int64(s.st_mtim.tv_sec) * 1_000_000_000 + Int64(s.st_mtim.tv_nsec)
        mode = UInt32(s.st_mode)
        owner = UInt32(s.st_uid)
        group = UInt32(s.st_gid)
    }

    /// Same inode, same size, same modification time.
    func isUnchanged(comparedTo other: FileIdentity) -> Bool {
        device == other.device && inode == other.inode && size == other.size
            && modificationNanoseconds == other.modificationNanoseconds
    }
}

/// What a file held when it was read: the bytes a caller plans an edit from.
///
/// `update` hands this snapshot back to the caller's transform together with the bytes
/// found at write time, so the caller can tell its own host's changes from unrelated ones.
public struct FileSnapshot: Equatable, Sendable {
    /// The path as the caller gave it.
    public var path: String
    /// The file actually read and written, after following symbolic links.
    public var resolvedPath: String
    public var bytes: [UInt8]
    /// `nil` when the file did not exist.
    public var identity: FileIdentity?
    /// SHA-256 of `bytes`.
    public var sha256: [UInt8]

    public var exists: Bool { identity != nil }

    init(path: String, resolvedPath: String, bytes: [UInt8], identity: FileIdentity?) {
        self.path = path
        self.resolvedPath = resolvedPath
        self.bytes = bytes
        self.identity = identity
        self.sha256 = Digest.sha256(bytes)
    }
}
