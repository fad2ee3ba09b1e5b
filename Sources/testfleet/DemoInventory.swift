import FleetTrustTestFleet
import Foundation

/// The demo fleet as a real inventory names it: Ansible INI with hosts called web1, db1, …, in
/// groups by role, rather than bare `ADDRESS:PORT` lines, so the dashboard's NAME and
/// ADDRESS:PORT columns say different things and `--group` has groups to pick; the bastion's
/// groups (`DemoBastion`) follow the fleet's.
struct DemoInventory {
    static let groups = ["web", "db", "cache", "mail"]

    let path: String

    init(directory: String) { path = directory + "/inventory.ini" }

    /// `web1`, `db1`, `cache1`, `mail1`, `web2`, …: the name of host `index`.
    static func name(of index: Int) -> String { "\(groups[index % groups.count])\(index / groups.count + 1)" }

    func write(_ fleet: TestFleet, bastion: DemoBastion) throws {
        var lines = ["# The demo fleet: one real sshd per host, named and grouped as a real inventory is; one host behind a bastion."]
        for (number, group) in Self.groups.enumerated() {
            let members = fleet.hosts.indices.filter { $0 % Self.groups.count == number }
            guard !members.isEmpty else { continue }
            lines.append("[\(group)]")
            lines += members.map { "\(Self.name(of: $0)) ansible_host=\(fleet.hosts[$0].address) ansible_port=\(fleet.hosts[$0].port)" }
        }
        lines += bastion.inventoryLines
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }
}
