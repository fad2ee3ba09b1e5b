#if canImport(Glibc)
import Glibc
#endif

/// A file the user names on the command line to be read (a known_hosts, pin, policy, key,
/// theme, targets or recorded-scan file), read with the system calls themselves so that every
/// failure is one sentence naming the file and what was wrong, from the real `errno`: never a
/// Foundation error domain, and a directory is called a directory.
public enum InputFile {
    /// Why a named file could not be read. `role` says what the file was meant to be
    /// ("known_hosts file", "pin file"), so the sentence tells the user which option it came from.
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        case missing(path: String, role: String)
        case directory(path: String, role: String)
        /// `reason` is `strerror`'s text for the failing call.
        case unreadable(path: String, role: String, reason: String)
        case tooLarge(path: String, role: String, limit: Int)
        case binary(path: String, role: String)

        public var path: String {
            switch self {
            case .missing(let path, _), .directory(let path, _), .unreadable(let path, _, _), .tooLarge(let path, _, _),
                 .binary(let path, _):
                return path
            }
        }

        /// What was wrong, without the path (for messages that name the file their own way).
        public var problem: String {
            switch self {
            case .missing(_, let role): return "no such file (given as the \(role))"
            case .directory(_, let role): return "this is a directory, not a \(role)"
            case .unreadable(_, let role, let reason): return "cannot read the \(role): \(reason)"
            case .tooLarge(_, let role, let limit): return "larger than \(limit >> 20) MiB, the most fleettrust reads as a \(role)"
            case .binary(_, let role): return "this is binary data, not a \(role)"
            }
        }

        public var description: String { "\(Self.clean(path)): \(problem)" }

        private static func clean(_ path: String) -> String { Sanitizer.clean(path, limit: 400) }
    }

    /// The whole of `path` (a regular file, or a pipe such as `<(command)`), refusing a directory,
    /// more than `limit` bytes, and (when `text`) binary data: a NUL byte, as `grep` decides.
    public static func read(_ path: String, role: String, limit: Int = 64 << 20, text: Bool = true) throws(Failure) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure(path, role: role, errno) }
        defer { close(descriptor) }
        var info = stat()
        if fstat(descriptor, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR { throw .directory(path: path, role: role) }
        var bytes: [UInt8] = []
        // Sized once from the file, so a 25 MB known_hosts is never held twice while the buffer grows.
        if info.st_mode & S_IFMT == S_IFREG && info.st_size > 0 { bytes.reserveCapacity(min(Int(info.st_size), limit)) }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure(path, role: role, errno)
            }
            if count == 0 { break }
            guard bytes.count + count <= limit else { throw .tooLarge(path: path, role: role, limit: limit) }
            bytes += chunk[0..<count]
        }
        if text && bytes.prefix(1 << 16).contains(0) { throw .binary(path: path, role: role) }
        return bytes
    }

    /// Whether `path` names nothing at all (not even a dangling link's target), as `ssh` treats a
    /// missing known_hosts file: empty, not an error.
    public static func isMissing(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) != 0 && errno == ENOENT
    }

    private static func failure(_ path: String, role: String, _ code: Int32) -> Failure {
        switch code {
        case ENOENT: return .missing(path: path, role: role)
        case EISDIR: return .directory(path: path, role: role)
        default: return .unreadable(path: path, role: role, reason: String(cString: strerror(code)))
        }
    }
}
