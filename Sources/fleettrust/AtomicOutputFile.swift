import Foundation

/// Writes a command's whole output to a file so that a reader never sees half of it: a
/// temporary file in the same directory, `fsync`, then `rename` over the target (atomic within
/// one file system). node_exporter's textfile collector reads `*.prom` whenever it is scraped,
/// and the temporary name does not end in `.prom`, so it is never read.
struct AtomicOutputFile {
    var path: String

    struct Failure: Error, CustomStringConvertible {
        var path: String
        var reason: String
        var description: String { "cannot write \(path): \(reason)" }
    }

    /// Replaces the file's content with `data`; a new file gets mode 0666 less the umask, as a
    /// shell redirection would give it.
    func write(_ data: Data) throws {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        var temporary = ""
        var fd: Int32 = -1
        for _ in 0..<16 where fd < 0 {
            temporary = "\(directory)/.\(url.lastPathComponent).\(UInt32.random(in: 0...UInt32.max)).tmp"
            fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
            if fd < 0 && errno != EEXIST { break }
        }
        guard fd >= 0 else { throw Failure(path: path, reason: String(cString: strerror(errno))) }
        var committed = false
        defer {
            if !committed { unlink(temporary) }
        }
        do {
            defer { close(fd) }
            var offset = 0
            try data.withUnsafeBytes { bytes in
                while offset < bytes.count {
                    let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                    if written < 0 && errno == EINTR { continue }
                    guard written > 0 else { throw Failure(path: path, reason: String(cString: strerror(errno))) }
                    offset += written
                }
            }
            guard fsync(fd) == 0 else { throw Failure(path: path, reason: String(cString: strerror(errno))) }
        }
        guard rename(temporary, path) == 0 else { throw Failure(path: path, reason: String(cString: strerror(errno))) }
        committed = true
    }
}
