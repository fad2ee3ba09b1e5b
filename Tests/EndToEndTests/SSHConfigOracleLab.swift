import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// One row of the ssh_config differential: an alias of the lab's configuration, what the real
/// `ssh` is expected to decide for it, and the status fleettrust must give it.
struct SSHConfigCase {
    var alias: String
    var ssh: SSHOracle.Finding
    var status: HostStatus
}

/// A real `sshd` on loopback, one ssh_config given both as fleettrust's inventory and as the
/// user's own configuration (`--ssh-config`), and the real `ssh -F` with the same file as the
/// oracle, each alias a row. With `hosts`, both run in a mount namespace whose `/etc/hosts` is
/// the lab's (`unshare -m`, then `mount --bind`), so names resolve as the row needs; the paths
/// reach the shell as arguments, never pasted into its text.
final class SSHConfigOracleLab {
    let sshd: LoopbackSSHD
    let scratch: String

    init() throws {
        sshd = try LoopbackSSHD()
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("ft-config-oracle-\(getpid())-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    }

    func stop() {
        sshd.stop()
        try? FileManager.default.removeItem(atPath: scratch)
    }

    func path(_ name: String) -> String { scratch + "/" + name }

    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        try text.write(toFile: path(name), atomically: true, encoding: .utf8)
        return path(name)
    }

    /// A fresh ed25519 key the server does not hold: a known_hosts line with it is another key.
    func spareKey(_ name: String = "spare") throws -> HostKey {
        try KeyFiles.generate(type: "ed25519", bits: nil, path: path(name))
        return try HostKey(openSSHLine: String(contentsOfFile: path(name + ".pub"), encoding: .utf8))
    }

    /// `program arguments`, inside a mount namespace with `hosts` as `/etc/hosts` when given, and
    /// `resolv` as resolv.conf, by default one naming only 127.0.0.1 (where no server answers), so
    /// no lookup leaves the machine.
    private func command(_ program: String, _ arguments: [String], hosts: String?, resolv: String?) throws -> (String, [String]) {
        guard let hosts else { return (program, arguments) }
        let resolv = try resolv ?? write("resolv.conf", "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")
        return ("/usr/bin/unshare", ["-m", "/bin/sh", "-c", #"mount --bind "$0" /etc/hosts && mount --bind "$1" /etc/resolv.conf && shift && exec "$@""#,
                                     hosts, resolv, program] + arguments)
    }

    /// Scans every row's alias with `config` as inventory and own configuration, asks the real
    /// `ssh` about each, and checks both against the row: fleettrust never quieter than `ssh`.
    @discardableResult
    func check(_ cases: [SSHConfigCase], config: String, hosts: String? = nil, resolv: String? = nil,
               file: StaticString = #filePath, line: UInt = #line) throws -> [RecordedScan.Host] {
        let (program, arguments) = try command(BuiltProducts.fleettrust, [
            "scan", "--format", "json", "--no-history", "--inventory", config, "--inventory-format", "ssh-config",
            "--ssh-config", config, "--timeout", "10"], hosts: hosts, resolv: resolv)
        let run = try ProgramRun.run(program, arguments, limit: 120)
        let scanned = try XCTUnwrap(try? RecordedScan.decode(Data(run.stdout)), run.stderrText, file: file, line: line).hosts
        for row in cases {
            var sshArguments = ["-v", "-F", config]
            for option in ["StrictHostKeyChecking=yes", "BatchMode=yes", "UpdateHostKeys=no", "PubkeyAuthentication=no",
                           "PasswordAuthentication=no", "KbdInteractiveAuthentication=no", "IdentityAgent=none",
                           "ConnectTimeout=10", "ControlMaster=no", "ControlPath=none"] { sshArguments += ["-o", option] }
            let (sshProgram, sshCommand) = try command("/usr/bin/ssh", sshArguments + ["fleettrust-oracle@" + row.alias, "true"], hosts: hosts, resolv: resolv)
            let output = try Tool.run(sshProgram, sshCommand)
            let ssh = SSHOracle.classifyHandshake(output.stderr)
            XCTAssertEqual(ssh.finding, row.ssh, "\(row.alias): the real ssh said \(ssh.finalMessage)", file: file, line: line)
            let host = try XCTUnwrap(scanned.first { $0.name == row.alias }, row.alias, file: file, line: line)
            XCTAssertEqual(host.status, row.status, "\(row.alias): \(host.reason)", file: file, line: line)
            XCTAssertGreaterThanOrEqual(Int(host.status.alarmLevel), Int(ssh.finding.alarmLevel),
                                        "\(row.alias): fleettrust \(host.status) is quieter than ssh \(ssh.finding)", file: file, line: line)
        }
        return scanned
    }
}
