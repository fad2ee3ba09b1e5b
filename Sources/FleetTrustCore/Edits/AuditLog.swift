import Foundation

/// An append-only record of every change made to a trust store (the dashboard's decisions,
/// `sync`, `tidy --fix`) and every connection started from the dashboard, one JSON object a line,
/// so that "who trusted this key, when, replacing what" has an answer. Every writer appends
/// `AuditEvent`s through `append(_:)`; the line format is `Record`.
///
/// Default path: `$XDG_STATE_HOME/fleettrust/audit.jsonl`, else `~/.local/state/fleettrust/audit.jsonl`.
public struct AuditLog: Sendable {
    public var path: String

    public init(path: String) {
        self.path = path
    }

    public static func defaultPath(environment: [String: String]) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/fleettrust/audit.jsonl" }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + "/.local/state/fleettrust/audit.jsonl"
    }

    /// One event about one host, as it is written (an `AuditEvent` encoded).
    public struct Record: Codable, Equatable, Sendable {
        public var time: String
        public var user: String
        public var action: String
        public var host: String
        public var endpoint: String
        public var names: [String]
        public var oldFingerprints: [String]
        public var newFingerprints: [String]
        /// `dashboard` plus the file written, or the command run for `connect`.
        public var method: String
        public var outcome: String
        /// The superseded or removed known_hosts lines, kept so a replace can be undone.
        public var oldEntries: [String]

        /// snake_case, as the scan JSON and every other document fleettrust writes.
        enum CodingKeys: String, CodingKey {
            case time, user, action, host, endpoint, names, method, outcome
            case oldFingerprints = "old_fingerprints", newFingerprints = "new_fingerprints", oldEntries = "old_entries"
        }
    }

    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    public static func currentUser(environment: [String: String]) -> String {
        if let entry = getpwuid(getuid()), let name = entry.pointee.pw_name { return String(cString: name) }
        return environment["USER"] ?? String(getuid())
    }

    /// Appends the records, all or none; creates the directory (mode 0700) and file (0600) when missing.
    ///
    /// The batch goes in one checked `write` under an exclusive `flock` (another fleettrust appending
    /// at once waits, at most 10 seconds). A short or failed write (a full disk) is cut back off with `ftruncate`, so
    /// the file never keeps half a line for the next record to be glued onto, and the error names
    /// the real cause. A file whose last line was left unfinished by an older writer gets a line
    /// break first, so each record stays a line of its own.
    ///
    /// The file is opened through the rule every writer of fleettrust follows
    /// (`FileSystemCalls.resolveSymlinks`): a symbolic link is written through, unless another user
    /// planted it in a sticky world-writable directory (`StoreError.untrustedSymlink`).
    public func append(_ records: [Record]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data: [UInt8] = []
        for record in records {
            data += try encoder.encode(record)
            data.append(0x0a)
        }
        guard !data.isEmpty else { return }
        let fd = try open()
        defer { close(fd) }
        let deadline = ContinuousClock.now + .seconds(10)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, ContinuousClock.now < deadline else {
                throw AuditLogError(path: path, code: errno == EWOULDBLOCK ? ETIMEDOUT : errno)
            }
            usleep(20_000)
        }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw AuditLogError(path: path, code: errno) }
        let before = status.st_size
        if before > 0, let last = Self.lastByte(fd, size: before), last != 0x0a { data.insert(0x0a, at: 0) }
        let failure = FileSystemCalls.writeAll(fd, data)
        guard let failure else { return }
        if ftruncate(fd, before) != 0 {
            throw AuditLogError(path: path, code: failure, partial: "cutting off the partial record failed too: "
                                + String(cString: strerror(errno)).lowercased())
        }
        throw AuditLogError(path: path, code: failure)
    }

    /// Opens the log as `append` would and closes it again: a writer calls it before changing a
    /// user's file, so a log that would refuse the record refuses the change instead (an edit
    /// nobody can audit is not made).
    public func check() throws {
        close(try open())
    }

    /// The log opened for appending (directory and file created when missing), through the
    /// symbolic-link rule of every writer.
    private func open() throws -> Int32 {
        let target = try FileSystemCalls.resolveSymlinks(path)
        let directory = (target as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let fd = Glibc.open(target, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw AuditLogError(path: path, code: errno) }
        return fd
    }

    private static func lastByte(_ fd: Int32, size: off_t) -> UInt8? {
        var byte: UInt8 = 0
        return pread(fd, &byte, 1, size - 1) == 1 ? byte : nil
    }
}

/// Why records could not be appended: the path and the system's own reason for the failing call.
/// Nothing of the records is left in the file, unless `partial` says why part of them is.
public struct AuditLogError: Error, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var partial: String?

    init(path: String, code: Int32, partial: String? = nil) {
        self.path = path
        self.reason = String(cString: strerror(code)).lowercased()
        self.partial = partial
    }

    public var description: String {
        "cannot append to the audit log \(path): \(reason); " + (partial ?? "nothing of the record was written")
    }
}
