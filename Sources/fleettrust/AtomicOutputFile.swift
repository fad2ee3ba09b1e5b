import Foundation

/// Writes a command's output to a file so that a reader never sees half of it: a temporary file
/// in the same directory, written in pieces, `fsync`, then `rename` over the target (atomic
/// within one file system). node_exporter's textfile collector reads `*.prom` whenever it is
/// scraped, and the temporary name does not end in `.prom`, so it is never read. A run that
/// fails before `commit` leaves the target as it was and removes the temporary file.
final class AtomicOutputFile {
    let path: String
    private let temporary: String
    private var fd: Int32
    private var committed = false

    struct Failure: Error, CustomStringConvertible {
        var path: String
        var reason: String
        var description: String { "cannot write \(path): \(reason)" }
    }

    /// Creates the temporary file beside `path`; a new file gets mode 0666 less the umask, as a
    /// shell redirection would give it.
    init(path: String) throws {
        self.path = path
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
        self.temporary = temporary
        self.fd = fd
    }

    /// Appends `data` to the temporary file.
    func append(_ data: Data) throws {
        try data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { throw Failure(path: path, reason: String(cString: strerror(errno))) }
                offset += written
            }
        }
    }

    /// Makes what was appended the file's content, at once.
    func commit() throws {
        guard fsync(fd) == 0 else { throw Failure(path: path, reason: String(cString: strerror(errno))) }
        close(fd)
        fd = -1
        guard rename(temporary, path) == 0 else { throw Failure(path: path, reason: String(cString: strerror(errno))) }
        committed = true
    }

    deinit {
        if fd >= 0 { close(fd) }
        if !committed { unlink(temporary) }
    }
}

/// A command's output, to standard output or (`--output`) to an `AtomicOutputFile`, gathered
/// into 64 KiB pieces so a report streamed host by host is not 10,000 small writes.
final class CommandOutput {
    private let file: AtomicOutputFile?
    private var buffer = Data()
    private static let piece = 64 * 1024

    init(path: String?) throws {
        file = try path.map(AtomicOutputFile.init(path:))
    }

    func write(_ data: Data) throws {
        buffer.append(data)
        if buffer.count >= Self.piece { try flush() }
    }

    /// Writes what is left; for a file, makes it the file's content.
    func finish() throws {
        try flush()
        try file?.commit()
    }

    private func flush() throws {
        guard !buffer.isEmpty else { return }
        if let file {
            try file.append(buffer)
        } else {
            FileHandle.standardOutput.write(buffer)
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
