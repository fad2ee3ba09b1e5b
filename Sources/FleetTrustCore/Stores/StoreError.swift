#if canImport(Glibc)
import Glibc
#endif

/// Why a user's file could not be saved; each case prints as one sentence naming the path.
///
/// Typed so that callers can act (a `conflict` asks the user to look again; `noSpace` does
/// not). Whatever the case, the original file is intact and no temporary file is left.
public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file (no write permission, immutable or append-only), or its file system, does not allow writing.
    case readOnly(path: String)
    /// The directory cannot take the new copy of the file.
    case readOnlyDirectory(path: String)
    /// The disk or the user's quota is full.
    case noSpace(path: String)
    case permissionDenied(path: String)
    /// Someone else changed what this write was about since it was planned.
    case conflict(path: String, detail: String)
    /// The path names a directory, device, socket or fifo.
    case notRegularFile(path: String)
    /// A file that must exist to be read (a pin file named on the command line) does not.
    case missingFile(path: String)
    /// A parent directory is missing beyond the one fleettrust may create.
    case missingDirectory(path: String)
    /// Symbolic links loop or nest too deeply.
    case symlinkLoop(path: String)
    /// A symbolic link in a shared (sticky, world-writable) directory that another user made: the
    /// kernel's `protected_symlinks` rule, which a shell redirection obeys, refuses to follow it.
    case untrustedSymlink(path: String, link: String)
    /// Other writers kept changing the file; gave up after a bounded number of attempts.
    case tooManyRetries(path: String)
    /// Another writer held the lock on the file's directory for longer than the bound.
    case lockTimeout(path: String, seconds: Int)
    /// Any other system error, with the call that failed.
    case system(path: String, operation: String, errno: Int32)

    public var path: String {
        switch self {
        case .readOnly(let p), .readOnlyDirectory(let p), .noSpace(let p), .permissionDenied(let p),
             .conflict(let p, _), .notRegularFile(let p), .missingFile(let p), .missingDirectory(let p), .symlinkLoop(let p), .untrustedSymlink(let p, _),
             .tooManyRetries(let p), .lockTimeout(let p, _), .system(let p, _, _):
            return p
        }
    }

    public var description: String {
        switch self {
        case .readOnly(let p): return "\(p) is read-only; nothing was changed."
        case .readOnlyDirectory(let p): return "cannot write in \(p) (read-only directory); nothing was changed."
        case .noSpace(let p): return "no space left to save \(p); the original is intact."
        case .permissionDenied(let p): return "permission denied writing \(p); nothing was changed."
        case .conflict(let p, let detail): return "\(p) changed since it was read (\(detail)); nothing was saved, look again."
        case .notRegularFile(let p): return "\(p) is not a regular file; nothing was changed."
        case .missingFile(let p): return "\(p) does not exist."
        case .missingDirectory(let p): return "directory \(p) does not exist; create it first."
        case .symlinkLoop(let p): return "\(p): too many levels of symbolic links."
        case .untrustedSymlink(_, let link):
            return "\(link) is a symbolic link another user made in a shared directory (sticky, world-writable); not followed, nothing was changed."
        case .tooManyRetries(let p): return "\(p) kept changing under concurrent writers; nothing more was saved, try again."
        case .lockTimeout(let p, let seconds):
            return "another program held the lock on \(p) for more than \(seconds) s; nothing was changed, try again."
        case .system(let p, let op, let code):
            return "\(op) failed for \(p): \(String(cString: strerror(code)))."
        }
    }

    /// Maps an errno from a write-side call to the case a user can act on.
    static func from(errno code: Int32, path: String, directory: String, operation: String) -> StoreError {
        switch code {
        case ENOSPC, EDQUOT: return .noSpace(path: path)
        case EROFS: return .readOnly(path: path)
        case EPERM where operation == "rename":
            return .readOnly(path: path)
        case EACCES, EPERM:
            return operation == "create temporary file" || operation == "rename"
                ? .readOnlyDirectory(path: directory) : .permissionDenied(path: path)
        case ELOOP: return .symlinkLoop(path: path)
        case ENOENT: return .missingDirectory(path: directory)
        default: return .system(path: path, operation: operation, errno: code)
        }
    }
}
