import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// What `fleettrust scan` and the dashboard say about inventory paths they cannot use: one
/// sentence on one line naming the path, and exit status 64; and that directories, scripts and
/// JSON on standard input are read.
final class InventoryInputCommandTests: XCTestCase {
    private var root: String!

    override func setUpWithError() throws {
        root = NSTemporaryDirectory() + "ft-input-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: root + "/empty", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/inv/group_vars", withIntermediateDirectories: true)
        try "[web]\nw1\nw2\n".write(toFile: root + "/inv/hosts", atomically: true, encoding: .utf8)
        try "ansible_host: 127.0.0.1\n".write(toFile: root + "/inv/group_vars/web.yml", atomically: true, encoding: .utf8)
        try Data([0x7B, 0x00, 0x01, 0x02]).write(to: URL(fileURLWithPath: root + "/blob"))
        // An existing (empty) known_hosts: a missing one is warned about, which is not what these tests look at.
        FileManager.default.createFile(atPath: root + "/known_hosts", contents: Data())
        try "#!/bin/sh\necho 'cmdb: connection refused' >&2\nexit 2\n".write(toFile: root + "/broken.sh", atomically: true, encoding: .utf8)
        chmod(root + "/broken.sh", 0o755)
    }

    override func tearDown() {
        if let root { try? FileManager.default.removeItem(atPath: root) }
    }

    private func fleettrust(_ arguments: [String]) throws -> ProgramRun {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = root
        return try ProgramRun.run(BuiltProducts.fleettrust, arguments + ["--known-hosts", root + "/known_hosts"],
                                  limit: 60, environment: environment)
    }

    private func assertRefused(_ inventory: String, _ message: String, file: StaticString = #filePath, line: UInt = #line) throws {
        for command in [["scan", "--dry-run"], []] {
            let run = try fleettrust(command + ["--inventory", inventory])
            XCTAssertEqual(run.status, 64, "\(command): \(run.stderrText)", file: file, line: line)
            if command.isEmpty {
                // The dashboard checks for a terminal before it reads the inventory; run here without
                // one, it refuses on that, also in one sentence (the tmux tests cover it with one).
                XCTAssertEqual(run.stderrText.filter { $0 == "\n" }.count, 1, run.stderrText, file: file, line: line)
                XCTAssertTrue(run.stderrText.hasPrefix("fleettrust: "), run.stderrText, file: file, line: line)
            } else {
                XCTAssertEqual(run.stderrText, "fleettrust: \(message)\n", "\(command)", file: file, line: line)
            }
        }
    }

    func testUnusableInventoriesAreOneSentenceAndExit64() throws {
        try assertRefused(root + "/missing", "\(root!)/missing: no such file or directory")
        try assertRefused(root + "/blob", "\(root!)/blob: this is binary data, not an inventory")
        try assertRefused(root + "/empty", "\(root!)/empty: this directory holds no inventory file (as Ansible does, fleettrust skips "
                          + "hidden names, group_vars, host_vars and names ending in .pyc .pyo .swp .bak ~ .rpm .md .txt .rst .orig .cfg .retry)")
        try assertRefused(root + "/broken.sh", "inventory script \(root!)/broken.sh --list failed with exit status 2; "
                          + "it wrote on standard error: cmdb: connection refused")
    }

    func testADirectoryIsReadWithItsGroupVars() throws {
        let run = try fleettrust(["scan", "--dry-run", "--inventory", root + "/inv"])
        XCTAssertEqual(run.status, 0, run.stderrText)
        XCTAssertEqual(run.stderrText, "")
        // The plan lists each host, then its summary line.
        XCTAssertTrue(run.stdoutText.split(separator: "\n").contains { $0.hasPrefix("would probe 2 hosts") }, run.stdoutText)
    }

    func testListJSONOnStandardInputIsReadWithTheFormatNamed() throws {
        let json = #"{"web": {"hosts": ["w1"]}, "_meta": {"hostvars": {"w1": {"ansible_host": "127.0.0.1"}}}}"#
        let command = "exec \(BuiltProducts.fleettrust) scan --dry-run --inventory - --inventory-format json --known-hosts \(root!)/known_hosts <<'EOF'\n\(json)\nEOF\n"
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = root
        let run = try ProgramRun.run("/bin/bash", ["-c", command], limit: 60, environment: environment)
        XCTAssertEqual(run.status, 0, run.stderrText)
        XCTAssertTrue(run.stdoutText.split(separator: "\n").contains { $0.hasPrefix("would probe 1 host;") }, run.stdoutText)
        XCTAssertTrue(run.stdoutText.contains("w1"), run.stdoutText)
    }
}
