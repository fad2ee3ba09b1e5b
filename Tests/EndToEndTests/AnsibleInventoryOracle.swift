import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// The real `ansible-inventory` as the oracle for inventory reading: ansible-core from PyPI,
/// installed once into a virtual environment under `.build/` (or named by
/// `FLEETTRUST_ANSIBLE_INVENTORY`). Where it cannot be had, tests that need it are skipped with
/// a message saying so.
enum AnsibleInventoryOracle {
    static let requirement = "ansible-core==2.19.14"

    static var packageRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }

    private static let located: Result<String, SetupFailure> = locate()

    struct SetupFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// The `ansible-inventory` to compare with, or an `XCTSkip` saying why there is none.
    static func executable() throws -> String {
        switch located {
        case .success(let path): return path
        case .failure(let failure):
            throw XCTSkip("ansible-core could not be installed from PyPI (\(failure)); the comparisons with ansible-inventory are skipped")
        }
    }

    private static func locate() -> Result<String, SetupFailure> {
        if let given = ProcessInfo.processInfo.environment["FLEETTRUST_ANSIBLE_INVENTORY"], !given.isEmpty {
            return access(given, X_OK) == 0 ? .success(given) : .failure(SetupFailure(description: "\(given) is not executable"))
        }
        let venv = packageRoot + "/.build/" + requirement.replacingOccurrences(of: "==", with: "-")
        let program = venv + "/bin/ansible-inventory"
        let complete = venv + "/.installed"
        let lockPath = packageRoot + "/.build/ansible-core.lock"
        let lock = open(lockPath, O_CREAT | O_RDWR | O_CLOEXEC, 0o644)
        guard lock >= 0 else { return .failure(SetupFailure(description: "cannot open \(lockPath)")) }
        defer { close(lock) }
        flock(lock, LOCK_EX)
        defer { flock(lock, LOCK_UN) }
        if access(complete, F_OK) == 0 { return .success(program) }
        try? FileManager.default.removeItem(atPath: venv)
        do {
            try step(["python3", "-m", "venv", venv], limit: 120)
            try step([venv + "/bin/python3", "-m", "pip", "install", "--quiet", "--disable-pip-version-check", requirement], limit: 600)
        } catch {
            return .failure(error)
        }
        guard access(program, X_OK) == 0 else { return .failure(SetupFailure(description: "pip installed no \(program)")) }
        FileManager.default.createFile(atPath: complete, contents: Data())
        return .success(program)
    }

    private static func step(_ command: [String], limit: Double) throws(SetupFailure) {
        let run: ProgramRun
        do {
            run = try ProgramRun.run("/usr/bin/env", command, limit: limit)
        } catch {
            throw SetupFailure(description: "\(command.joined(separator: " ")): \(error)")
        }
        guard run.status == 0 else {
            let said = run.stderrText.split(separator: "\n").suffix(3).joined(separator: " / ")
            throw SetupFailure(description: "\(command.prefix(3).joined(separator: " ")) exited with \(run.status): \(said)")
        }
    }

    /// The version actually compared against (`ansible-inventory --version`, first line).
    static func version() throws -> String {
        let run = try ProgramRun.run(try executable(), ["--version"], limit: 60, environment: environment())
        return String(run.stdoutText.split(separator: "\n").first ?? "")
    }

    /// Removes the scratch directories `list` and `version` made for this process.
    static func removeScratch() {
        for name in ["ft-ansible-home-\(getpid())", "ft-ansible-playbook-\(getpid())"] {
            try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + name)
        }
    }

    /// A clean environment: no `ansible.cfg` from anywhere, state under a scratch directory.
    private static func environment() -> [String: String] {
        let scratch = NSTemporaryDirectory() + "ft-ansible-home-\(getpid())"
        try? FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: scratch + "/ansible.cfg", contents: Data())
        var environment = ProcessInfo.processInfo.environment
        environment["ANSIBLE_CONFIG"] = scratch + "/ansible.cfg"
        environment["ANSIBLE_HOME"] = scratch
        environment["ANSIBLE_LOCAL_TEMP"] = scratch + "/tmp"
        environment["ANSIBLE_DEPRECATION_WARNINGS"] = "False"
        environment["ANSIBLE_NOCOLOR"] = "1"
        return environment
    }

    /// `ansible-inventory -i SOURCE --list`, with an empty playbook directory so that only the
    /// inventory's own `group_vars/` and `host_vars/` count.
    static func list(_ source: String, _ more: String...) throws -> AnsibleListing {
        let playbookDirectory = NSTemporaryDirectory() + "ft-ansible-playbook-\(getpid())"
        try FileManager.default.createDirectory(atPath: playbookDirectory, withIntermediateDirectories: true)
        let run = try ProgramRun.run(try executable(), ([source] + more).flatMap { ["-i", $0] } + ["--list", "--playbook-dir", playbookDirectory],
                                     limit: 180, environment: environment())
        guard run.status == 0 else {
            throw SetupFailure(description: "ansible-inventory -i \(([source] + more).joined(separator: " -i ")) --list exited with \(run.status): \(run.stderrText)")
        }
        return try AnsibleListing(json: Data(run.stdout), warnings: run.stderrText)
    }
}

/// What `ansible-inventory --list` says about each host, reduced to what fleettrust uses.
struct AnsibleListing {
    /// `user@address:port` per host, read from the host's variables as Ansible's ssh
    /// connection plugin reads them.
    var endpoints: [String: String] = [:]
    /// Every group each host is in, through children, without `all` and `ungrouped`.
    var groups: [String: Set<String>] = [:]
    var json: Data
    var warnings: String

    init(json: Data, warnings: String) throws {
        self.json = json
        self.warnings = warnings
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: json) as? [String: Any])
        let hostVars = (object["_meta"] as? [String: Any])?["hostvars"] as? [String: [String: Any]] ?? [:]
        var direct: [String: [String]] = [:]
        var children: [String: [String]] = [:]
        for (group, body) in object where group != "_meta" {
            let body = body as? [String: Any] ?? [:]
            direct[group] = body["hosts"] as? [String] ?? []
            children[group] = body["children"] as? [String] ?? []
        }
        func members(_ group: String, _ seen: inout Set<String>) -> Set<String> {
            guard seen.insert(group).inserted else { return [] }
            var result = Set(direct[group] ?? [])
            for child in children[group] ?? [] { result.formUnion(members(child, &seen)) }
            return result
        }
        for group in direct.keys {
            var seen = Set<String>()
            for host in members(group, &seen) {
                groups[host, default: []].formUnion(["all", "ungrouped"].contains(group) ? [] : [group])
            }
        }
        for host in groups.keys {
            let vars = hostVars[host] ?? [:]
            func text(_ keys: String...) -> String? { keys.lazy.compactMap { vars[$0].map { "\($0)" } }.first }
            let user = text("ansible_ssh_user", "ansible_user").map { $0 + "@" } ?? ""
            endpoints[host] = "\(user)\(text("ansible_ssh_host", "ansible_host") ?? host):\(text("ansible_ssh_port", "ansible_port") ?? "22")"
        }
    }
}

extension Inventory {
    /// `user@address:port` per host, as `AnsibleListing.endpoints`.
    var ansibleEndpoints: [String: String] {
        Dictionary(uniqueKeysWithValues: hosts.map { ($0.name, "\($0.user.map { $0 + "@" } ?? "")\($0.address):\($0.port)") })
    }

    /// Every group per host, as `AnsibleListing.groups`.
    var ansibleGroups: [String: Set<String>] {
        Dictionary(uniqueKeysWithValues: hosts.map { ($0.name, Set($0.groups + $0.inheritedGroups).subtracting(["ungrouped"])) })
    }
}
