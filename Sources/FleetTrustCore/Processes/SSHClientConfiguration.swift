import Subprocess
#if canImport(System)
import System
#else
import SystemPackage
#endif

/// What the user's OpenSSH client configuration says, asked of the real `ssh -G` so that every
/// `Include`, `Match` and system default is resolved exactly as `ssh` resolves it.
public enum SSHClientConfiguration {
    /// `HashKnownHosts` for an ordinary host (Debian's /etc/ssh/ssh_config sets it to yes);
    /// false when `ssh` cannot be asked. Run through swift-subprocess, which waits for the child
    /// without holding a thread of Swift's cooperative pool.
    public static func hashKnownHosts() async -> Bool {
        guard let result = try? await run(.path(FilePath("/usr/bin/ssh")), arguments: ["-G", "fleettrust.invalid"],
                                          input: .none, output: .string(limit: 1 << 20), error: .discarded),
              result.terminationStatus.isSuccess else { return false }
        return result.standardOutput.split(separator: "\n").contains("hashknownhosts yes")
    }
}
