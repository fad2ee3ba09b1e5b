import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// The real binary and the real `ssh` against inventories whose names, addresses, users and jump
/// hops carry shell payloads, and routes `ssh` cannot parse: `scan` runs nothing for such a host,
/// reports it refused at stage `proxy` with its `file:line`, and never probes a host directly
/// because its route did not parse. `ssh` refuses the same values (the oracle).
final class InventoryInjectionCommandTests: XCTestCase {
    private var directory = ""
    private var target: LabSSHD?

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "ft-inject-e2e-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory + "/runs", withIntermediateDirectories: true)
    }

    override func tearDown() {
        target?.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private var marker: String { directory + "/MARKER" }
    private var runs: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: directory + "/runs")) ?? []).sorted() }
    /// Hands `%h %r %n` to a second shell, so any payload that reached it would create the marker;
    /// the clean host `good` leaves `runs/ran-good` behind, proof that the command really runs.
    private var proxyCommand: String { "sh -c 'echo %h %r %n >/dev/null; >\(directory)/runs/ran-%n'" }

    /// Payloads a line-based file can hold (no newline; the Core matrix covers newlines).
    private var payloads: [String] {
        ["$(>\(marker))", "`>\(marker)`", "x;>\(marker)", "x|>\(marker)", "x&>\(marker)", "-oProxyCommand=>\(marker)"]
    }

    private func write(_ name: String, _ text: String) throws -> String {
        let path = directory + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private func scan(_ inventory: String) throws -> (ProgramRun, [String: RecordedScan.Host]) {
        var environment = ProcessInfo.processInfo.environment
        environment["SHELL"] = "/bin/sh"
        // The clean host's ProxyCommand is the control that commands do run: allowed, as a user allows it.
        let run = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "json", "--timeout", "3", "--allow-inventory-proxy-command",
                                                                "--known-hosts", try write("known_hosts", ""), "--inventory", inventory],
                                     limit: 90, environment: environment)
        let document = try RecordedScan.decode(Data(run.stdout))
        return (run, Dictionary(document.hosts.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first }))
    }

    /// Every host but `good` is refused at stage `proxy` with `code`, naming `file:line`, and the
    /// warning on standard error names the same place.
    private func assertRefused(_ hosts: [String: RecordedScan.Host], _ run: ProgramRun, lines: [String: (Int, FailureCode)],
                               file: String, clean: Bool = true, caller: StaticString = #filePath, at line: UInt = #line) {
        XCTAssertEqual(Set(hosts.keys), Set(lines.keys).union(clean ? ["good"] : []), run.stderrText, file: caller, line: line)
        for (name, (number, code)) in lines {
            let host = hosts[name]
            XCTAssertEqual(host?.status, .error, name, file: caller, line: line)
            XCTAssertEqual(host?.error?.stage, "proxy", name, file: caller, line: line)
            XCTAssertEqual(host?.error?.code, code, name, file: caller, line: line)
            XCTAssertEqual(host?.error?.message.hasPrefix("\(file):\(number): its "), true,
                           "\(name): \(host?.error?.message ?? "none")", file: caller, line: line)
            XCTAssertTrue(run.stderrText.contains("\(file):\(number): warning: host "), "\(name): \(run.stderrText)", file: caller, line: line)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker), "a payload ran", file: caller, line: line)
        XCTAssertEqual(runs, clean ? ["ran-good"] : [], "the ProxyCommand ran for the clean host only", file: caller, line: line)
    }

    func testScanOfAnINIInventoryWithShellPayloadsInEveryTokenAndHopRunsNothingAndRefusesEachHost() throws {
        var lines = ["good ansible_host=127.0.0.1 ansible_user=ops"]
        var expected: [String: (Int, FailureCode)] = [:]
        for (index, payload) in payloads.enumerated() {
            let rows = [(payload, "\(payload) ansible_host=127.0.0.1", FailureCode.unsafeName),
                        ("address\(index)", "address\(index) ansible_host='\(payload)'", .unsafeName),
                        ("user\(index)", "user\(index) ansible_host=127.0.0.1 ansible_user='\(payload)'", .unsafeName),
                        ("hop\(index)", "hop\(index) ansible_host=127.0.0.1 ansible_ssh_common_args='-J ops@\(payload)'", .invalidRoute),
                        ("hopuser\(index)", "hopuser\(index) ansible_host=127.0.0.1 ansible_ssh_common_args='-J \(payload)@gate'", .invalidRoute)]
            for (name, row, code) in rows {
                lines.append(row)
                expected[name] = (lines.count, code)
            }
        }
        lines += ["[all:vars]", "ansible_ssh_common_args=-o ProxyCommand=\"\(proxyCommand)\""]
        let inventory = try write("hosts.ini", lines.joined(separator: "\n") + "\n")
        let (run, hosts) = try scan(inventory)
        assertRefused(hosts, run, lines: expected, file: inventory)
        XCTAssertEqual(hosts["good"]?.error?.code, .connectionClosed,
                       "the clean host went through its ProxyCommand, which exits 0: a close before the server's identification")
    }

    func testScanOfAnSSHConfigInventoryWithShellPayloadsInHostNameUserAliasAndProxyJumpRunsNothingAndRefusesEachHost() throws {
        var lines = ["Host good", "  HostName 127.0.0.1", "  User ops"]
        var expected: [String: (Int, FailureCode)] = [:]
        for (index, payload) in payloads.enumerated() {
            let blocks: [(String, [String], FailureCode)] = [
                (payload, ["HostName 127.0.0.1"], .unsafeName),
                ("address\(index)", ["HostName \(payload)"], .unsafeName),
                ("user\(index)", ["HostName 127.0.0.1", "User \(payload)"], .unsafeName),
                ("hop\(index)", ["HostName 127.0.0.1", "ProxyJump ops@\(payload)"], .invalidRoute),
                ("hopuser\(index)", ["HostName 127.0.0.1", "ProxyJump \(payload)@gate"], .invalidRoute)]
            for (name, settings, code) in blocks {
                lines.append("Host \(name)")
                expected[name] = (lines.count, code)
                lines += settings.map { "  " + $0 }
            }
        }
        lines += ["Host *", "  ProxyCommand \(proxyCommand)"]
        let inventory = try write("ssh_config", lines.joined(separator: "\n") + "\n")
        let (run, hosts) = try scan(inventory)
        assertRefused(hosts, run, lines: expected, file: inventory)
    }

    /// The oracle: the real `ssh`, with the same ProxyCommand, refuses each payload given as the
    /// host, the user or a `-J` hop on its command line, before it runs anything.
    func testRealSSHRefusesTheSameValuesBeforeRunningItsProxyCommand() throws {
        let config = try write("oracle_config", "Host *\n  ProxyCommand \(proxyCommand)\n  BatchMode yes\n"
                                   + "  UserKnownHostsFile /dev/null\n  GlobalKnownHostsFile /dev/null\n  ConnectTimeout 3\n")
        let ssh = { (arguments: [String]) throws -> ProgramRun in
            try ProgramRun.run("/usr/bin/ssh", ["-F", config] + arguments, limit: 30)
        }
        let clean = try ssh(["-l", "ops", "--", "good", "true"])
        XCTAssertEqual(clean.status, 255)
        XCTAssertEqual(runs, ["ran-good"], "ssh ran its ProxyCommand for a clean name: \(clean.stderrText)")
        for payload in payloads + ["x\n>\(marker)"] {
            let host = try ssh(["-l", "ops", "--", payload, "true"])
            XCTAssertEqual(host.status, 255)
            XCTAssertTrue(host.stderrText.contains("hostname contains invalid characters"), "\(payload): \(host.stderrText)")
            if !payload.hasPrefix("-") {
                let user = try ssh(["-l", payload, "--", "good", "true"])
                XCTAssertEqual(user.status, 255)
                XCTAssertTrue(user.stderrText.contains("remote username contains invalid characters"), "\(payload): \(user.stderrText)")
            }
            // This ssh (9.2p1 Debian, with 10.3's -J check) does not refuse a newline in a -J hop: it
            // cuts the hop's own ProxyCommand there. fleettrust refuses it (the Core matrix).
            for hop in ["ops@\(payload)", "\(payload)@gate"] where !payload.contains("\n") {
                let jump = try ssh(["-J", hop, "--", "good", "true"])
                XCTAssertEqual(jump.status, 255)
                XCTAssertTrue(jump.stderrText.contains("Invalid -J argument"), "\(hop): \(jump.stderrText)")
            }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker), "ssh ran a payload")
        XCTAssertEqual(runs, ["ran-good"])
    }

    /// Where fleettrust is stricter than `ssh`, on purpose: `ssh` checks only what its command line
    /// gives it and trusts `HostName` and `User` from its own configuration, so a payload there
    /// reaches its ProxyCommand's shell. fleettrust reads that file as an inventory from anywhere,
    /// and refuses the host (the scan tests above).
    func testRealSSHTrustsHostNameAndUserFromItsOwnConfigWhichFleettrustRefuses() throws {
        // ssh lower-cases the HostName it expands for %h, so this marker's path is lower case.
        let carried = directory + "/carried"
        let config = try write("trusting_config", "Host carried\n  HostName x;>\(carried);\n  ProxyCommand \(proxyCommand)\n"
                                   + "  BatchMode yes\n  UserKnownHostsFile /dev/null\n  ConnectTimeout 3\n")
        let run = try ProgramRun.run("/usr/bin/ssh", ["-F", config, "carried", "true"], limit: 30)
        XCTAssertEqual(run.status, 255)
        XCTAssertTrue(FileManager.default.fileExists(atPath: carried), "ssh ran the HostName's payload: \(run.stderrText)")
        try? FileManager.default.removeItem(atPath: carried)
        let (scanned, hosts) = try scan(config)
        XCTAssertEqual(hosts["carried"]?.error?.code, .unsafeName, scanned.stderrText)
        XCTAssertFalse(FileManager.default.fileExists(atPath: carried), "fleettrust ran nothing")
    }

    /// A ProxyJump `ssh` cannot parse: the host is refused at stage `proxy`, and the real `sshd` at
    /// the address a direct probe would have reached sees no connection at all. `ssh` refuses the
    /// same configuration.
    func testARouteThatDoesNotParseIsNeverProbedDirectly() throws {
        let server = try LabSSHD(address: "127.0.0.3", in: directory)
        target = server
        let ini = try write("routes.ini", """
            zero ansible_host=127.0.0.3 ansible_port=\(server.port) ansible_ssh_common_args='-J gate:0'
            dash ansible_host=127.0.0.3 ansible_port=\(server.port) ansible_ssh_extra_args='-o ProxyJump=-gate'

            """)
        let config = try write("routes_config", """
            Host good
              HostName 127.0.0.1
              ProxyCommand \(proxyCommand)
            Host range
              HostName 127.0.0.3
              Port \(server.port)
              ProxyJump gate:65536
            Host bare6
              HostName 127.0.0.3
              Port \(server.port)
              ProxyJump gate,2001:db8::1

            """)
        for (inventory, expected) in [(ini, ["zero": 1, "dash": 2]), (config, ["range": 4, "bare6": 8])] {
            let (run, hosts) = try scan(inventory)
            assertRefused(hosts, run, lines: expected.mapValues { ($0, .invalidRoute) }, file: inventory, clean: inventory == config)
            for name in expected.keys {
                XCTAssertTrue(hosts[name]?.error?.message.contains("is invalid") == true, "\(name): \(hosts[name]?.error?.message ?? "")")
                XCTAssertEqual(hosts[name]?.route, [], name)
            }
            try? FileManager.default.removeItem(atPath: directory + "/runs/ran-good")
        }
        XCTAssertEqual(server.connections, 0, "nothing was probed directly:\n\(server.log)")
        let plan = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--dry-run", "--format", "json", "--inventory", ini], limit: 30)
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(plan.stdout)) as? [String: Any], plan.stderrText)
        let probes = (document["hosts"] as? [[String: Any]] ?? []).map { ($0["route"] as? [String: Any])?["probe"] as? String }
        XCTAssertEqual(probes, ["none", "none"], "the dry run says neither would be probed")
        XCTAssertEqual((document["summary"] as? [String: Any])?["probed"] as? Int, 0)

        let oracle = try ProgramRun.run("/usr/bin/ssh", ["-F", config, "-o", "BatchMode=yes", "range", "true"], limit: 30)
        XCTAssertEqual(oracle.status, 255)
        XCTAssertTrue(oracle.stderrText.contains("Invalid ProxyJump"), oracle.stderrText)
        let jump = try ProgramRun.run("/usr/bin/ssh", ["-F", "/dev/null", "-o", "BatchMode=yes", "-J", "gate:0",
                                                       "-p", String(server.port), "127.0.0.3", "true"], limit: 30)
        XCTAssertEqual(jump.status, 255)
        XCTAssertTrue(jump.stderrText.contains("Invalid -J argument"), jump.stderrText)
        XCTAssertEqual(server.connections, 0, "ssh did not connect either:\n\(server.log)")
    }
}
