import Foundation
import FleetTrustTestFleet

/// The processes holding logins on a lab bastion, found from the bastion's own log: each
/// `Accepted publickey for … from ADDRESS port PORT` names the client's port, and the process
/// with that TCP connection open (`/proc/net/tcp`, then `/proc/PID/fd`) is the `ssh` control
/// master that logged in. Other tests' masters log in to other bastions (other ports), so the
/// processes found are this test's own.
enum BastionLogins {
    /// The client ports of the logins the bastion accepted, in order.
    static func clientPorts(_ bastion: LabSSHD) -> [Int] {
        let pattern = try! NSRegularExpression(pattern: "Accepted publickey for \\S+ from \\S+ port ([0-9]+)")
        let log = bastion.log
        return pattern.matches(in: log, range: NSRange(log.startIndex..., in: log)).compactMap { match in
            Range(match.range(at: 1), in: log).flatMap { Int(log[$0]) }
        }
    }

    /// Each process (PID and program name) holding an open connection that logged in to `bastion`.
    static func processes(holdingLoginsOn bastion: LabSSHD) -> [(pid: pid_t, command: String)] {
        let inodes = Set(clientPorts(bastion).compactMap { socketInode(localPort: $0, remotePort: bastion.port) })
        guard !inodes.isEmpty, let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return entries.compactMap { entry -> (pid: pid_t, command: String)? in
            guard let pid = pid_t(entry), let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else {
                return nil
            }
            let holds = descriptors.contains { fd in
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"),
                      target.hasPrefix("socket:[") else { return false }
                return inodes.contains(String(target.dropFirst(8).dropLast()))
            }
            guard holds, let command = DashboardTmux.command(of: pid) else { return nil }
            return (pid, command)
        }
    }

    /// The socket inode of the open TCP connection from `localPort` to `remotePort`, if any.
    private static func socketInode(localPort: Int, remotePort: Int) -> String? {
        let local = ":" + hex(localPort)
        let remote = ":" + hex(remotePort)
        for line in wholeFile("/proc/net/tcp").split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 9, fields[1].hasSuffix(local), fields[2].hasSuffix(remote), fields[3] == "01" else { continue }
            return String(fields[9])
        }
        return nil
    }

    private static func hex(_ port: Int) -> String {
        let digits = String(port, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// A /proc file read to its end (it reports size 0, and Foundation's readers stop at the first page).
    private static func wholeFile(_ path: String) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 { break }
            bytes += buffer.prefix(count)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
