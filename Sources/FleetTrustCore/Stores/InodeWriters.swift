import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The processes that hold a file open for writing, found through `/proc` (each process's
/// `fd/N` links and `fdinfo/N` flags), for the one question a replacing write cannot answer
/// with a lease alone: may someone still append to the copy we just renamed away? A process
/// that opened it read-only (a pager, `tail -f`) never writes, so it is not waited for; one that
/// opened it for writing (an `ssh` that has not appended yet, an `echo >>` with its descriptor
/// open) is. Only processes this user may inspect are seen, as with `fuser`.
enum InodeWriters {
    /// PIDs other than ours holding the file open for writing (O_WRONLY or O_RDWR).
    static func holding(_ fd: Int32) -> [pid_t] {
        guard let mine = FileSystemCalls.fileStatus(fd) else { return [] }
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        let me = getpid()
        var writers: [pid_t] = []
        for entry in entries {
            guard let pid = pid_t(entry), pid != me else { continue }
            let fdDirectory = "/proc/\(entry)/fd"
            guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: fdDirectory) else { continue }
            for descriptor in descriptors {
                var s = stat()
                guard stat(fdDirectory + "/" + descriptor, &s) == 0, s.st_dev == mine.st_dev, s.st_ino == mine.st_ino,
                      opensForWriting(pid: entry, fd: descriptor) else { continue }
                writers.append(pid)
                break
            }
        }
        return writers
    }

    /// Whether `/proc/PID/fdinfo/FD` gives an access mode that writes; unreadable counts as writing.
    private static func opensForWriting(pid: String, fd: String) -> Bool {
        guard let info = try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8),
              let line = info.split(separator: "\n").first(where: { $0.hasPrefix("flags:") }),
              let flags = Int(line.dropFirst("flags:".count).trimmingCharacters(in: .whitespaces), radix: 8) else { return true }
        return flags & Int(O_ACCMODE) != Int(O_RDONLY)
    }
}
