import Glibc

/// The identification our client sends: the local `ssh`'s own, byte for byte.
///
/// A man in the middle that routes by the client's identification could send `ssh` to a rogue
/// server and a scanner that names itself to the real one, so the scan would prove a key `ssh`
/// never meets. `ssh -V` prints `OpenSSH_9.2p1 Debian-2+deb12u3, OpenSSL …`; `ssh` sends the part
/// before the comma after `SSH-2.0-`. Read once per process; without a usable `ssh`, OpenSSH 9.2's
/// plain version.
enum ClientIdentification {
    static let fallback = "OpenSSH_9.2p1"
    static let sshPath = "/usr/bin/ssh"

    /// `SSH-2.0-…`, without CR LF.
    static let line: [UInt8] = Array("SSH-2.0-\(version(fromVersionOutput: localSSHVersionOutput() ?? "") ?? fallback)".utf8)

    /// The version `ssh` sends, from what `ssh -V` printed: up to the first comma, an OpenSSH
    /// version of printable ASCII without spaces at either end; nil for anything else.
    static func version(fromVersionOutput text: String) -> String? {
        let first = text.split(separator: "\n").first.map { $0.split(separator: ",", maxSplits: 1)[0] } ?? ""
        guard first.hasPrefix("OpenSSH_"), first.utf8.count <= 200, first.last != " ",
              first.utf8.allSatisfy({ (0x20...0x7e).contains($0) }) else { return nil }
        return String(first)
    }

    /// What `ssh -V` writes (to its standard error), at most 4 KiB; nil when it cannot be run.
    private static func localSSHVersionOutput() -> String? {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { return nil }
        _ = fcntl(pipeEnds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(pipeEnds[1], F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 2)
        var pid: pid_t = 0
        let names: [String] = [sshPath, "-V"]
        let arguments = names.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        let spawned = posix_spawn(&pid, sshPath, &actions, nil, arguments, environ)
        close(pipeEnds[1])
        defer { close(pipeEnds[0]) }
        guard spawned == 0 else { return nil }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while output.count < 4096 {
            let count = read(pipeEnds[0], &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            output += chunk[0..<count]
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return String(decoding: output, as: UTF8.self)
    }
}
