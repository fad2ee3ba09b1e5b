import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// `fleettrust scan` against the real fleet, with the real `ssh` as the judge of every status.
final class ScanCommandTests: XCTestCase {
    private func scan(_ arguments: [String], limit: Double = 90) throws -> ProgramRun {
        try ProgramRun.run(BuiltProducts.fleettrust, ["scan"] + arguments, limit: limit)
    }

    private func report(_ run: ProgramRun, file: StaticString = #filePath, line: UInt = #line) throws -> RecordedScan {
        do {
            return try RecordedScan.decode(Data(run.stdout))
        } catch {
            XCTFail("not a scan document: \(error)\n\(run.stderrText)", file: file, line: line)
            throw error
        }
    }

    func testEveryHostStatusIsWhatRealSshDecides() throws {
        let fleet = try TestFleet.start(hosts: 5)
        defer { fleet.stop() }
        let run = try scan(["--inventory", fleet.inventoryPath, "--known-hosts", fleet.knownHostsPath, "--format", "json"])
        let document = try report(run)
        XCTAssertEqual(run.status, 2, "changed and revoked hosts make the exit status 2")
        XCTAssertEqual(document.hosts.map(\.status), [.trusted, .trusted, .new, .changed, .revoked])
        for (host, row) in zip(fleet.hosts, document.hosts) {
            let oracle = try SSHOracle.check(name: host.address, port: host.port, knownHosts: fleet.knownHostsPath).verdict
            let expected: [SSHOracle.Verdict: HostStatus] = [.trusted: .trusted, .trustedByCA: .trusted, .unknown: .new,
                                                            .changed: .changed, .revoked: .revoked]
            XCTAssertEqual(expected[oracle], row.status, "host\(host.index): ssh says \(oracle.rawValue)")
            XCTAssertEqual(row.knownHostsName, host.knownHostsName)
        }
        let certified = try XCTUnwrap(document.hosts[0].keys.first { $0.type == "ssh-ed25519-cert-v01@openssh.com" })
        XCTAssertEqual(certified.verdict, .trustedByCA)
        XCTAssertTrue(certified.negotiated, "ssh meets the certificate: a @cert-authority line matches")
        XCTAssertEqual(document.hosts[0].method, "cert-authority")
        XCTAssertEqual(certified.certificate?.caKey, fleet.caPublicKey.openSSHLine)
        XCTAssertEqual(certified.certificate?.principals.contains("127.0.0.1"), true)
        XCTAssertNil(document.hosts[3].method, "a changed host has no trust method")
        XCTAssertTrue(document.hosts[3].reason.contains("is recorded with another key"), document.hosts[3].reason)
        XCTAssertEqual(document.hosts[1].method, "known-hosts")
        XCTAssertEqual(document.hosts[3].keys.map(\.verdict), [.changed, .notRecorded, .notRecorded],
                       "only the recorded type is changed; others are not recorded")
    }

    func testJsonHasTheDocumentedShapeAndEveryKeyMatchesSshKeygen() throws {
        let fleet = try TestFleet.start(hosts: 2)
        defer { fleet.stop() }
        let run = try scan(["--inventory", fleet.inventoryPath, "--known-hosts", fleet.knownHostsPath, "--format", "json"])
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout)) as? [String: Any])
        let hosts = try XCTUnwrap(object["hosts"] as? [[String: Any]])
        XCTAssertNotNil(object["summary"] as? [String: Any])
        for host in hosts {
            for field in ["name", "host", "port", "address", "status", "keys", "groups", "known_hosts_name", "method"] {
                XCTAssertNotNil(host[field], "host field \(field)")
            }
            XCTAssertTrue(host.keys.contains("error"), "error is present (null when keys were found)")
            for key in try XCTUnwrap(host["keys"] as? [[String: Any]]) {
                for field in ["type", "fingerprint", "key", "verdict", "evidence", "pin"] { XCTAssertNotNil(key[field], field) }
            }
        }
        let document = try report(run)
        for (host, row) in zip(fleet.hosts, document.hosts) {
            for file in host.publicKeyFiles {
                let fingerprint = String(try Tool.check("/usr/bin/ssh-keygen", ["-lf", file]).split(separator: " ")[1])
                XCTAssertTrue(row.keys.contains { $0.fingerprint == fingerprint }, "host\(host.index) lacks \(fingerprint)")
            }
        }
    }

    func testSavedNewHostThenSwappedKeyIsChanged() throws {
        let fleet = try TestFleet.start(hosts: 3)
        defer { fleet.stop() }
        let knownHosts = fleet.directory + "/saved_known_hosts"
        let inventory = fleet.directory + "/one-host.txt"
        try "\(fleet.hosts[2].address):\(fleet.hosts[2].port)\n".write(toFile: inventory, atomically: true, encoding: .utf8)
        let first = try scan(["--inventory", inventory, "--known-hosts", knownHosts, "--format", "known-hosts", "--trust-on-first-use"])
        XCTAssertEqual(first.status, 1, "a new host makes the exit status 1")
        try Data(first.stdout).write(to: URL(fileURLWithPath: knownHosts))
        XCTAssertEqual(try SSHOracle.check(name: fleet.hosts[2].address, port: fleet.hosts[2].port, knownHosts: knownHosts).verdict,
                       .trusted, "the known-hosts output is what ssh accepts")
        let trusted = try scan(["--inventory", inventory, "--known-hosts", knownHosts])
        XCTAssertEqual(trusted.status, 0, trusted.stdoutText)
        try fleet.rekey(host: 2)
        let swapped = try scan(["--inventory", inventory, "--known-hosts", knownHosts, "--format", "json"])
        XCTAssertEqual(swapped.status, 2)
        XCTAssertEqual(try report(swapped).hosts.first?.status, .changed)
    }

    func testSilentAndClosedPortsFailAtTheirStageWhileOthersFinish() throws {
        let fleet = try TestFleet.start(hosts: 1)
        defer { fleet.stop() }
        let silent = try SilentListener()
        defer { silent.close() }
        let closedPort = try Loopback.freePort()
        let inventory = fleet.directory + "/mixed.txt"
        try ["127.0.0.1:\(silent.port)", "127.0.0.1:\(closedPort)", fleet.hosts[0].endpoints[0].label]
            .joined(separator: "\n").write(toFile: inventory, atomically: true, encoding: .utf8)
        let run = try scan(["--inventory", inventory, "--known-hosts", fleet.knownHostsPath, "--format", "json", "--timeout", "2"])
        let hosts = try report(run).hosts
        XCTAssertEqual(hosts.map(\.status), [.unreachable, .unreachable, .trusted])
        XCTAssertEqual(hosts[0].error, ScanReport.Failure(stage: "banner", code: .bannerTimeout, message: hosts[0].error?.message ?? ""))
        XCTAssertEqual(hosts[1].error?.stage, "connect")
        XCTAssertEqual(hosts[1].error?.code, .connectionRefused)
        XCTAssertNil(hosts[2].error)
        XCTAssertLessThan(run.seconds, 20, "a silent host costs one timeout, not a hang")
        XCTAssertEqual(run.status, 1)
    }

    /// A host `ssh` reaches through ProxyJump is probed through that hop, never directly: a hop
    /// that refuses the connection fails the host with stage `proxy`, naming the hop, and nothing
    /// is sent to the host. `--direct` probes it directly.
    func testAHostBehindProxyJumpIsProbedOnlyThroughItsHopUnlessDirectIsAsked() throws {
        let fleet = try TestFleet.start(hosts: 2)
        defer { fleet.stop() }
        let closed = try Loopback.freePort()
        let config = fleet.directory + "/proxied_config"
        try """
            Host behind
              HostName 127.0.0.1
              Port \(fleet.hosts[1].port)
              ProxyJump admin@127.0.0.1:\(closed)
            Host front
              HostName 127.0.0.1
              Port \(fleet.hosts[1].port)
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let run = try scan(["--inventory", config, "--known-hosts", fleet.knownHostsPath, "--format", "json"])
        let hosts = try report(run).hosts
        XCTAssertEqual(hosts.map(\.name), ["behind", "front"])
        XCTAssertEqual(hosts.map(\.status), [.unreachable, .trusted])
        XCTAssertEqual(hosts[0].error?.stage, "proxy")
        XCTAssertEqual(hosts[0].error?.code, .hopUnreachable)
        XCTAssertTrue(hosts[0].error?.message.contains("admin@127.0.0.1:\(closed)") ?? false, String(describing: hosts[0].error))
        XCTAssertEqual(hosts[0].route, [ScanReport.Hop(kind: "proxy-jump", hop: "admin@127.0.0.1:\(closed)")])
        XCTAssertEqual(hosts[0].keys.count, 0)
        XCTAssertEqual(run.status, 1)

        let direct = try scan(["--inventory", config, "--known-hosts", fleet.knownHostsPath, "--format", "json", "--direct"])
        XCTAssertEqual(try report(direct).hosts.map(\.status), [.trusted, .trusted], direct.stderrText)
        XCTAssertEqual(direct.status, 0)
    }

    func testReplayJudgesRecordedKeysAgainstTodaysFilesWithoutNetwork() throws {
        let fleet = try TestFleet.start(hosts: 3)
        let recorded = NSTemporaryDirectory() + "/replay-\(getpid()).json"
        defer { unlink(recorded) }
        let run = try scan(["--inventory", fleet.inventoryPath, "--known-hosts", fleet.knownHostsPath, "--format", "json"])
        try Data(run.stdout).write(to: URL(fileURLWithPath: recorded))
        let knownHosts = try String(contentsOfFile: fleet.knownHostsPath, encoding: .utf8)
        let newHost = fleet.hosts[2]
        let updated = knownHosts + newHost.publicKeys.map { "\(newHost.knownHostsName) \($0.openSSHLine)\n" }.joined()
        let todays = NSTemporaryDirectory() + "/replay-kh-\(getpid())"
        defer { unlink(todays) }
        try updated.write(toFile: todays, atomically: true, encoding: .utf8)
        fleet.stop()
        let replayed = try scan(["--replay", recorded, "--known-hosts", todays, "--format", "json"])
        XCTAssertEqual(try report(replayed).hosts.map(\.status), [.trusted, .trusted, .trusted])
        XCTAssertEqual(replayed.status, 0)
        let broken = NSTemporaryDirectory() + "/replay-bad-\(getpid()).json"
        defer { unlink(broken) }
        try "{\"hosts\": 3}".write(toFile: broken, atomically: true, encoding: .utf8)
        let refused = try scan(["--replay", broken])
        XCTAssertEqual(refused.status, 64)
        XCTAssertTrue(refused.stderrText.contains(broken), refused.stderrText)
    }

    func testDryRunReadsEverythingAndProbesNothing() throws {
        let silent = try SilentListener()
        defer { silent.close() }
        let dir = NSTemporaryDirectory() + "/dry-run-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "127.0.0.1:\(silent.port)\nweb1.example\n".write(toFile: dir + "/inv", atomically: true, encoding: .utf8)
        try "# one comment\nweb1.example ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n"
            .write(toFile: dir + "/kh", atomically: true, encoding: .utf8)
        let run = try scan(["--inventory", dir + "/inv", "--known-hosts", dir + "/kh", "--dry-run", "--timeout", "30"])
        XCTAssertEqual(run.status, 0)
        // One line per host (name, endpoint, the name known_hosts is searched under, route), then the count.
        let lines = run.stdoutText.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 3, run.stdoutText)
        XCTAssertEqual(lines.last, "would probe 2 hosts; 2 known_hosts lines read from 1 file")
        XCTAssertTrue(lines[0].contains("127.0.0.1:\(silent.port)") && lines[0].contains("as [127.0.0.1]:\(silent.port)")
                      && lines[0].hasSuffix("direct"), run.stdoutText)
        XCTAssertTrue(lines[1].hasPrefix("web1.example") && lines[1].contains("as web1.example"), run.stdoutText)
        XCTAssertLessThan(run.seconds, 10, "a dry run never waits on the silent host")
        let unreadable = try scan(["--inventory", dir + "/inv", "--known-hosts", dir, "--dry-run"])
        XCTAssertEqual(unreadable.status, 64, "an unreadable known_hosts stops the scan before any probe")
    }

    func testBadUsageAndUnreadableInputExit64() throws {
        XCTAssertEqual(try scan(["--inventory", "/nonexistent/inventory"]).status, 64)
        XCTAssertEqual(try scan([]).status, 64)
        XCTAssertEqual(try scan(["--inventory", "/dev/null", "--format", "yaml"]).status, 64)
    }
}
