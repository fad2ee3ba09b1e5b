import Foundation
import Glibc

/// Read-modify-replace of a small text file that never leaves it half written and never
/// loses another writer's change: an advisory lock serialises fleettrust processes, the new
/// content goes to a temporary file in the same directory (fsync, same mode and owner),
/// and `rename` swaps it in. Symlinks are written through to their target.
///
/// `ssh` itself appends to known_hosts without taking any lock, so callers re-check the
/// fresh content inside `transform`, right before the rename.
public enum AtomicFileUpdate {
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public let path: String
        public let operation: String
        public let code: Int32
        public var description: String {
            "cannot \(operation) \(Sanitizer.clean(path)): \(String(cString: strerror(code)))"
        }
    }

    /// Applies `transform` to the current bytes (empty when the file does not exist); a nil
    /// result leaves the file untouched. New files get `newFileMode`; a missing parent
    /// directory is created with mode 0700 (as `~/.ssh` should be).
    public static func update(path: String, newFileMode: mode_t = 0o644,
                              _ transform: ([UInt8]) throws -> [UInt8]?) throws {
        let target = resolveSymlinks(path)
        let directory = (target as NSString).deletingLastPathComponent.isEmpty ? "." : (target as NSString).deletingLastPathComponent
        let name = (target as NSString).lastPathComponent
        if !FileManager.default.fileExists(atPath: directory) {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            } catch {
                throw Failure(path: directory, operation: "create directory", code: errno == 0 ? EACCES : errno)
            }
        }
        let lockPath = "\(directory)/.\(name).fleettrust-lock"
        let lock = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw Failure(path: lockPath, operation: "open lock file", code: errno) }
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 {
            guard errno == EINTR else { throw Failure(path: lockPath, operation: "lock", code: errno) }
        }
        defer { flock(lock, LOCK_UN) }

        var info = stat()
        let exists = stat(target, &info) == 0
        let current = exists ? try readAll(target) : []
        guard let replacement = try transform(current) else { return }

        var template = Array("\(directory)/.\(name).fleettrust-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw Failure(path: directory, operation: "create a temporary file in", code: errno) }
        let temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var committed = false
        defer {
            if !committed { unlink(temporary) }
        }
        do {
            defer { close(fd) }
            try writeAll(fd, replacement, path: temporary)
            if exists {
                _ = fchown(fd, info.st_uid, info.st_gid)
                guard fchmod(fd, info.st_mode & 0o7777) == 0 else { throw Failure(path: temporary, operation: "set the mode of", code: errno) }
            } else {
                guard fchmod(fd, newFileMode) == 0 else { throw Failure(path: temporary, operation: "set the mode of", code: errno) }
            }
            guard fsync(fd) == 0 else { throw Failure(path: temporary, operation: "sync", code: errno) }
        }
        guard rename(temporary, target) == 0 else { throw Failure(path: target, operation: "replace", code: errno) }
        committed = true
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            fsync(directoryFD)
            close(directoryFD)
        }
    }

    /// Follows symlinks (up to 40) so the link itself stays and its target is replaced.
    static func resolveSymlinks(_ path: String) -> String {
        var current = path
        for _ in 0..<40 {
            guard let destination = try? FileManager.default.destinationOfSymbolicLink(atPath: current) else { return current }
            current = destination.hasPrefix("/") ? destination
                : ((current as NSString).deletingLastPathComponent as NSString).appendingPathComponent(destination)
        }
        return current
    }

    static func readAll(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(path: path, operation: "read", code: errno) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(path: path, operation: "read", code: errno)
            }
            if count == 0 { return bytes }
            bytes += buffer[0..<count]
        }
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw Failure(path: path, operation: "write", code: errno)
            }
            offset += written
        }
    }
}
