import Foundation
import Glibc
import FleetTrustCore

/// The files a route's `ssh` writes in the scan's private directory (a child's standard error,
/// a master's log), read back to say why a hop or a channel failed.
enum RouteFiles {
    /// The size of `path` now (0 when missing): where the next messages will start.
    static func size(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }

    /// At most `limit` bytes of `path` from `offset`, as written.
    static func read(_ path: String, from offset: Int, limit: Int = 4096) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        guard lseek(fd, off_t(max(0, offset)), SEEK_SET) >= 0 else { return "" }
        var buffer = [UInt8](repeating: 0, count: limit)
        let count = Glibc.read(fd, &buffer, buffer.count)
        return String(decoding: buffer.prefix(max(0, count)), as: UTF8.self)
    }

    /// The end (at most `limit` bytes) of `path`, as written.
    static func tail(_ path: String, limit: Int = 4096) -> String {
        read(path, from: size(path) - limit, limit: limit)
    }

    /// The last two meaningful lines of what `ssh` said, cleaned to one line of at most `limit`
    /// characters (banners and "Permanently added" notes left out).
    static func summary(_ text: String, limit: Int = 300) -> String {
        let lines = text
            .split(whereSeparator: { $0 == "\n" || $0 == "\r" })
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("@@@") && !$0.hasPrefix("Warning: Permanently added") }
        return Sanitizer.clean(lines.suffix(2).joined(separator: " / "), limit: limit)
    }
}
