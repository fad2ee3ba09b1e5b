import FleetTrustTestFleet
import Foundation

/// The demo's bastion and the host behind it, because most real fleets have one: `bastion1`, a
/// real sshd on 127.0.0.2 that admits only the demo's own login key, and `vault1` on 127.0.0.3
/// (the same key logs in, so connect works through the hop), which the inventory reaches only as
/// `ProxyJump bastion1`. The demo writes the ssh_config that
/// resolves the hop (address, port, user, key, known_hosts: all the demo's own files, never the
/// user's ~/.ssh), and records both servers' host keys in the demo's known_hosts, as an
/// administrator would have, so the route is judged end to end. Both servers are the route
/// tests' `LabSSHD`, stopped by PID in `stop()`.
final class DemoBastion {
    static let bastionName = "bastion1", bastionGroup = "jump"
    static let routedName = "vault1", routedGroup = "vault"

    let bastion: LabSSHD
    let routed: LabSSHD
    let sshConfigPath: String

    /// Starts both servers in the fleet's directory; the bastion admits `fleet`'s login key.
    init(beside fleet: TestFleet, login: String) throws {
        let loginKey = try KeyFiles.line(publicKeyFile: fleet.loginKeyFile + ".pub")
        bastion = try LabSSHD(address: "127.0.0.2", authorizedKey: loginKey, in: fleet.directory)
        // On a failure, a server already started stops by PID as it is released (`LabSSHD.deinit`).
        routed = try LabSSHD(address: "127.0.0.3", authorizedKey: loginKey, in: fleet.directory)
        sshConfigPath = fleet.directory + "/ssh_config"
        try writeSSHConfig(fleet: fleet, login: login)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: fleet.knownHostsPath))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data((bastion.knownHostsLines + routed.knownHostsLines).utf8))
    }

    /// Ansible INI lines: the `jump` group with the bastion, the `vault` group with the host behind it.
    var inventoryLines: [String] {
        ["[\(Self.bastionGroup)]", "\(Self.bastionName) ansible_host=\(bastion.address) ansible_port=\(bastion.port)",
         "[\(Self.routedGroup)]",
         "\(Self.routedName) ansible_host=\(routed.address) ansible_port=\(routed.port) ansible_ssh_common_args='-o ProxyJump=\(Self.bastionName)'"]
    }

    func stop() {
        bastion.stop()
        routed.stop()
    }

    /// The hop as `ssh -F` resolves it: only the bastion's own block, so nothing else changes.
    private func writeSSHConfig(fleet: TestFleet, login: String) throws {
        let lines = [
            "# The demo's ssh configuration: how its bastion is reached, with the demo's own key and known_hosts.",
            "Host \(Self.bastionName)",
            "  HostName \(bastion.address)",
            "  Port \(bastion.port)",
            "  User \(login)",
            "  IdentityFile \"\(fleet.loginKeyFile)\"",
            "  IdentitiesOnly yes",
            "  IdentityAgent none",
            "  UserKnownHostsFile \"\(fleet.knownHostsPath)\"",
            "  GlobalKnownHostsFile /dev/null",
        ]
        try (lines.joined(separator: "\n") + "\n").write(toFile: sshConfigPath, atomically: true, encoding: .utf8)
    }
}
