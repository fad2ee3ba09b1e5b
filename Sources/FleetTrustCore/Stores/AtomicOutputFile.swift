import Foundation

/// Writes a command's output to a file so that a reader never sees half of it: a temporary file
/// in the same directory, written in pieces, `fsync`, then `rename` over the target (atomic
/// within one file system). node_exporter's textfile collector reads `*.prom` whenever it is
/// scraped, and the temporary name does not end in `.prom`, so it is never read. A run that
/// fails before `commit` leaves the target as it was and removes the temporary file. The target
/// is the user's file: its mode and owner are kept and a symbolic link is written through and
/// kept, as for known_hosts (`ReplacedFile`).
public final class AtomicOutputFile {
    private let file: ReplacedFile
    private var committed = false

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Creates the temporary file beside `path` (beside a symlink's target); a new file gets mode
    /// 0666 less the umask, as a shell redirection would give it.
    public init(path: String) throws {
        do { file = try ReplacedFile(path: path) } catch { throw Failure(description: "cannot write \(path): \(error)") }
    }

    /// Appends `data` to the temporary file.
    public func append(_ data: Data) throws {
        try data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(file.descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else {
                    let code = written == 0 ? ENOSPC : errno
                    let reason = code == ENOSPC || code == EDQUOT ? "no space left to save it; the original is intact" : String(cString: strerror(code))
                    throw Failure(description: "cannot write \(file.path): \(reason)")
                }
                offset += written
            }
        }
    }

    /// Makes what was appended the file's content, at once.
    public func commit() throws {
        committed = true
        do { try file.install() } catch { throw Failure(description: "cannot write \(file.path): \(error)") }
    }

    /// The temporary file's path, for a forced exit to remove.
    public var temporaryPath: String { file.temporary }

    /// Removes the temporary file; the target is left as it was.
    public func abandon() {
        guard !committed else { return }
        committed = true
        file.abandon()
    }

    deinit {
        if !committed { file.abandon() }
    }
}

/// A command's output, to standard output or (`--output`) to an `AtomicOutputFile`, gathered
/// into 64 KiB pieces so a report streamed host by host is not 10,000 small writes.
public final class CommandOutput {
    private let file: AtomicOutputFile?
    private var buffer = Data()
    private static let piece = 64 * 1024

    public init(path: String?) throws {
        file = try path.map(AtomicOutputFile.init(path:))
    }

    public func write(_ data: Data) throws {
        buffer.append(data)
        if buffer.count >= Self.piece { try flush() }
    }

    /// The `--output` temporary file, if any.
    public var temporaryPath: String? { file?.temporaryPath }

    /// Drops what was gathered; a file's temporary copy is removed and the target keeps its content.
    public func abandon() {
        buffer.removeAll()
        file?.abandon()
    }

    /// Writes what is left; for a file, makes it the file's content.
    public func finish() throws {
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
