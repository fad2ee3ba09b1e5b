import Foundation
import XCTest
import FleetTrustCore
@testable import FleetTrustSSH

/// Inventory values never reach a shell: every value a ProxyCommand token (`%h`, `%r`, `%n`) or a
/// jump hop carries, written in every inventory format with every shell payload, makes its host
/// refused at stage `proxy` with its `file:line`, and the real probe path (a ProxyCommand run by
/// `$SHELL -c`, bastion `ssh`s) runs nothing for it. The ProxyCommand handed the values to a
/// second shell (`sh -c '… %h %r %n …'`), so any payload that got through would create its marker;
/// a clean host beside them proves that the command really runs.
final class InventoryInjectionTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "ft-inject-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory + "/runs", withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    enum Format: String, CaseIterable { case ini, yaml, json, script, sshConfig }
    enum Position: String, CaseIterable { case alias, address, user, hopHost, hopUser }

    private var marker: String { directory + "/MARKER" }
    /// A fake `ssh` for the bastions: had a hop been handed to it, this file would exist.
    private var sshRan: String { directory + "/ssh-ran" }

    /// Each payload alone would run a command (create the marker) if a shell read it.
    private var payloads: [(String, String)] {
        [("command substitution", "$(>\(marker))"), ("backquote", "`>\(marker)`"), ("semicolon", "x;>\(marker)"),
         ("pipe", "x|>\(marker)"), ("ampersand", "x&>\(marker)"), ("newline", "x\n>\(marker)"),
         ("leading dash", "-oProxyCommand=>\(marker)")]
    }

    private var proxyCommand: String { "sh -c 'echo %h %r %n >/dev/null; >\(directory)/runs/ran-%n'" }

    private func json(_ text: String) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes]), as: UTF8.self)
            .dropFirst().dropLast().description
    }

    /// One inventory holding `good` (clean, through the ProxyCommand) and one host with `payload`
    /// at `position`; nil where the format cannot carry the payload there (a newline in a
    /// line-based file, or in `-J` arguments, which are split into words as Ansible splits them).
    private func inventory(_ format: Format, _ position: Position, _ payload: String) throws -> String? {
        if payload.contains("\n") && (format == .ini || format == .sshConfig || position == .hopHost || position == .hopUser) {
            return nil
        }
        let alias = position == .alias ? payload : "bad"
        let address = position == .address ? payload : "127.0.0.1"
        let user = position == .user ? payload : "ops"
        let hop = position == .hopHost ? "ops@\(payload)" : position == .hopUser ? "\(payload)@gate" : nil
        let path = directory + "/inventory-\(format.rawValue)"
        var text: String
        switch format {
        case .sshConfig:
            text = ["good": ("127.0.0.1", "ops", nil as String?), alias: (address, user, hop)].sorted { $0.key < $1.key }
                .map { name, value in
                    "Host \(name)\n  HostName \(value.0)\n  User \(value.1)\n  "
                        + (value.2.map { "ProxyJump \($0)" } ?? "ProxyCommand \(proxyCommand)") + "\n"
                }.joined()
        case .ini:
            let route = hop.map { "ansible_ssh_common_args='-J \($0)'" } ?? ""
            text = "good ansible_host=127.0.0.1 ansible_user=ops\n\(alias) ansible_host='\(address)' ansible_user='\(user)' \(route)\n"
                + "[all:vars]\nansible_ssh_common_args=-o ProxyCommand=\"\(proxyCommand)\"\n"
        case .yaml:
            text = "all:\n  vars:\n    ansible_ssh_common_args: \(json("-o ProxyCommand=\"\(proxyCommand)\""))\n  hosts:\n"
                + "    good: {ansible_host: 127.0.0.1, ansible_user: ops}\n"
                + "    \(json(alias)): {ansible_host: \(json(address)), ansible_user: \(json(user))"
                + (hop.map { ", ansible_ssh_common_args: \(json("-J " + $0))" } ?? "") + "}\n"
        case .json, .script:
            var badVars = "\"ansible_host\": \(json(address)), \"ansible_user\": \(json(user))"
            if let hop { badVars += ", \"ansible_ssh_common_args\": \(json("-J " + hop))" }
            text = "{\"all\": {\"hosts\": [\"good\", \(json(alias))], \"vars\": {\"ansible_ssh_common_args\": "
                + "\(json("-o ProxyCommand=\"\(proxyCommand)\""))}},\n \"_meta\": {\"hostvars\": {"
                + "\"good\": {\"ansible_host\": \"127.0.0.1\", \"ansible_user\": \"ops\"}, \(json(alias)): {\(badVars)}}}}\n"
            if format == .script { text = "#!/bin/sh\ncat <<'END'\n\(text)END\n" }
        }
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, format == .script ? 0o755 : 0o644)
        return path
    }

    func testEveryTokenAndHopFromEveryFormatWithEveryShellPayloadIsRefusedAndRunsNothing() throws {
        try "#!/bin/sh\n>\(sshRan)\nexit 1\n".write(toFile: directory + "/ssh", atomically: true, encoding: .utf8)
        chmod(directory + "/ssh", 0o755)
        var cells = 0
        for format in Format.allCases {
            for position in Position.allCases {
                for (label, payload) in payloads {
                    guard let path = try inventory(format, position, payload) else { continue }
                    let what = "\(format) \(position) \(label)"
                    cells += 1
                    // The clean host's ProxyCommand is the control that commands do run: allowed here,
                    // as the user allows it with --allow-inventory-proxy-command.
                    var options = InventoryReadOptions()
                    options.allowInventoryProxyCommands = true
                    let inventory = try InventoryLoader(format: format == .sshConfig ? .sshConfig : nil, options: options).loadWaiting([path])
                    let bad = try XCTUnwrap(inventory.hosts.first { $0.name != "good" }, "\(what): \(inventory.diagnostics)")
                    let good = try XCTUnwrap(inventory.hosts.first { $0.name == "good" }, what)
                    XCTAssertNil(good.refusal, what)
                    let refusal = bad.refusal
                    XCTAssertNotNil(refusal, "\(what) is refused")
                    XCTAssertEqual(refusal?.code, position == .hopHost || position == .hopUser ? .invalidRoute : .unsafeName, what)
                    let location = try XCTUnwrap(bad.source, what)
                    XCTAssertTrue(refusal?.description.hasPrefix("\(location): ") == true, "\(what): \(String(describing: refusal))")
                    XCTAssertTrue(location.file.contains("inventory-\(format.rawValue)") && location.line >= 1, "\(what): \(location)")
                    XCTAssertTrue(inventory.diagnostics.contains { $0.location == location && $0.severity == .warning }, "\(what): \(inventory.diagnostics)")

                    let routes = BastionConnections(settings: .init(ssh: directory + "/ssh"), timeout: .seconds(3))
                    defer { routes.close() }
                    for host in [bad, good] {
                        let result = HostProbe(host: host, timeout: .seconds(3), scheduler: AttemptScheduler(helperThreads: 2), routes: routes)
                            .run(cancellation: ProbeCancellation())
                        if host.name != "good" {
                            XCTAssertEqual(result.failures, refusal.map { [$0.failure] }, what)
                            XCTAssertEqual(result.failures.first?.stage, .proxy, what)
                        }
                    }
                    XCTAssertFalse(FileManager.default.fileExists(atPath: marker), "\(what): a payload ran")
                    XCTAssertFalse(FileManager.default.fileExists(atPath: sshRan), "\(what): ssh was run for a refused hop")
                    XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory + "/runs"), ["ran-good"],
                                   "\(what): the ProxyCommand ran for the clean host only")
                    for file in try FileManager.default.contentsOfDirectory(atPath: directory + "/runs") {
                        try FileManager.default.removeItem(atPath: directory + "/runs/" + file)
                    }
                    try? FileManager.default.removeItem(atPath: marker)
                }
            }
        }
        XCTAssertEqual(cells, 5 * 5 * 7 - 2 * 5 - 3 * 2, "every format, position and payload that the format can carry")
    }
}
