import Foundation

/// The known_hosts `connect` hands to `ssh` when the policy trusts keys `ssh` would not find
/// (pins, a CA), kept where no other user can read, replace or block it: a directory made by
/// `mkdtemp` (mode 0700, a name nobody can guess or create first) holding one 0600 file,
/// removed with the directory once `ssh` has returned.
struct PrivateKnownHosts {
    let directory: String
    var path: String { directory + "/policy-keys" }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init(lines: String) throws {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
        var template = Array((base.hasSuffix("/") ? base : base + "/").appending("fleettrust-connect-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }).map({ String(cString: $0) }) else {
            throw Failure(description: "Could not make a private directory in \(base) for ssh's known_hosts: \(String(cString: strerror(errno)))")
        }
        directory = made
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        let bytes = Array(lines.utf8)
        let written = fd < 0 ? -1 : bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let code = errno
        if fd >= 0 { close(fd) }
        guard written == bytes.count else {
            remove()
            throw Failure(description: "Could not write ssh's known_hosts in \(directory): "
                          + String(cString: strerror(written < 0 ? code : ENOSPC)))
        }
    }

    /// Removes the file and the directory.
    func remove() {
        unlink(path)
        rmdir(directory)
    }
}
