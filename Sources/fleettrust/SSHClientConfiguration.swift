import Foundation

/// What the user's OpenSSH client configuration says, asked of the real `ssh -G` so that every
/// `Include`, `Match` and system default is resolved exactly as `ssh` resolves it.
enum SSHClientConfiguration {
    /// `HashKnownHosts` for an ordinary host (Debian's /etc/ssh/ssh_config sets it to yes);
    /// false when `ssh` cannot be asked.
    static func hashKnownHosts() -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ssh")
        process.arguments = ["-G", "fleettrust.invalid"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").contains("hashknownhosts yes")
    }
}
