import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// `scan`'s headless formats against the real fleet: Prometheus metrics that render the same
/// judgement as the JSON (checked strictly, and by `promtool` when it is installed), an output
/// file replaced atomically, known-hosts lines hashed as asked, the dry-run plan, and skipped
/// inventory entries that never vanish.
final class ScanFormatsTests: XCTestCase {
    private func scan(_ arguments: [String]) throws -> ProgramRun {
        try ProgramRun.run(BuiltProducts.fleettrust, ["scan"] + arguments, limit: 90)
    }

    private func json(_ run: ProgramRun) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout)) as? [String: Any], run.stderrText)
    }

    /// `promtool check metrics` (`PROMTOOL`, else `/usr/bin/promtool`, from Debian's `prometheus`
    /// package). Its only lint allowed is the days unit the README documents. Without it the test
    /// is skipped, after every other check has run: the oracle's part was not checked.
    private func checkWithPromtool(_ text: String) throws {
        let path = ProcessInfo.processInfo.environment["PROMTOOL"] ?? "/usr/bin/promtool"
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw XCTSkip("promtool not found (set PROMTOOL or install Debian's prometheus package): checked by the strict reader only")
        }
        let checked = try Tool.run(path, ["check", "metrics"], input: text)
        let findings = (checked.stdout + checked.stderr).split(separator: "\n")
        XCTAssertTrue(checked.status == 0 || checked.status == 3, "promtool: \(checked.stdout)\(checked.stderr)")
        for finding in findings {
            XCTAssertEqual(finding, #"fleettrust_certificate_expires_in_days use base unit "seconds" instead of "days""#)
        }
    }

    func testPrometheusMetricsRenderTheSameJudgementAsTheJson() throws {
        let fleet = try TestFleet.start(hosts: 5)
        defer { fleet.stop() }
        let common = ["--inventory", fleet.inventoryPath, "--known-hosts", fleet.knownHostsPath]
        let document = try RecordedScan.decode(Data(try scan(common + ["--format", "json"]).stdout))
        let run = try scan(common + ["--format", "prometheus"])
        XCTAssertEqual(run.status, 2, run.stderrText)
        let metrics = try PrometheusExposition(parsing: run.stdoutText)
        XCTAssertEqual(Set(metrics.types.values), ["gauge"])
        XCTAssertEqual(Set(metrics.help.keys), Set(metrics.types.keys), "every family has its HELP")

        let statuses = metrics.samples(named: "fleettrust_host_status")
        XCTAssertEqual(statuses.count, document.hosts.count)
        for host in document.hosts {
            let endpoint = "\(host.host):\(host.port)"
            XCTAssertEqual(statuses.filter { $0.labels["name"] == host.name && $0.labels["endpoint"] == endpoint }
                .map { $0.labels["status"] ?? "" }, [host.status.rawValue])
            let level = metrics.samples(named: "fleettrust_host_alarm_level").first { $0.labels["name"] == host.name }
            XCTAssertEqual(level?.value, Double(ExitStatusRule.host(status: host.status, drift: host.drift)))
            let unfetched = metrics.samples(named: "fleettrust_host_unfetched_key_types").filter { $0.labels["name"] == host.name }
            XCTAssertEqual(unfetched.map(\.value), [Double(host.unfetchedKeys.count)], "the JSON's unfetched_keys")
            for key in host.keys {
                guard let days = key.certificate?.expiresInDays else { continue }
                let sample = metrics.samples(named: "fleettrust_certificate_expires_in_days")
                    .first { $0.labels["name"] == host.name && $0.labels["type"] == key.type }
                XCTAssertEqual(sample?.value, Double(days), "the JSON's expires_in_days")
                XCTAssertEqual(sample?.labels["ca"], key.certificate?.ca)
                let expiry = metrics.samples(named: "fleettrust_certificate_expiry_timestamp_seconds").first { $0.labels["name"] == host.name }
                XCTAssertEqual(expiry?.value, key.certificate.map { Double($0.validBefore) })
            }
        }
        XCTAssertEqual(metrics.samples(named: "fleettrust_certificate_expires_in_days").count, 1, "host0's certificate")
        let counts = Dictionary(uniqueKeysWithValues: metrics.samples(named: "fleettrust_hosts").map { ($0.labels["status"] ?? "", $0.value) })
        for status in HostStatus.allCases where status != .pending {
            XCTAssertEqual(counts[status.rawValue], Double(document.summary.byStatus[status.rawValue] ?? 0), status.rawValue)
        }
        XCTAssertEqual(metrics.samples(named: "fleettrust_scan_exit_status").first?.value, 2)
        XCTAssertEqual(metrics.samples(named: "fleettrust_inventory_skipped_entries").first?.value, 0)
        let duration = try XCTUnwrap(metrics.samples(named: "fleettrust_scan_duration_seconds").first?.value)
        XCTAssertGreaterThan(duration, 0)
        XCTAssertLessThan(duration, run.seconds)
        let finished = try XCTUnwrap(metrics.samples(named: "fleettrust_scan_finished_timestamp_seconds").first?.value)
        XCTAssertLessThan(abs(finished - Date().timeIntervalSince1970), 120)
        try checkWithPromtool(run.stdoutText)
    }

    /// A reader polling the file while scans replace it never sees half a file.
    func testOutputFileIsReplacedAtomicallyWhileBeingRead() throws {
        let work = NSTemporaryDirectory() + "/textfile-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let directory = work + "/collector"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let recorded = work + "/recorded.json", knownHosts = work + "/known_hosts"
        let fleet = try TestFleet.start(hosts: 2)
        let recording = try scan(["--inventory", fleet.inventoryPath, "--known-hosts", fleet.knownHostsPath, "--format", "json"])
        try Data(recording.stdout).write(to: URL(fileURLWithPath: recorded))
        try FileManager.default.copyItem(atPath: fleet.knownHostsPath, toPath: knownHosts)
        fleet.stop()
        let target = directory + "/fleettrust.prom"
        try "# nothing yet\n".write(toFile: target, atomically: true, encoding: .utf8)

        let state = ReaderState()
        let reader = Thread {
            while !state.stopped {
                guard let data = FileManager.default.contents(atPath: target) else { state.record("the file went missing"); continue }
                let text = String(decoding: data, as: UTF8.self)
                // Paces the reader between reads (each read is the check), not a wait for an event.
                usleep(500)
                if text == "# nothing yet\n" { continue }
                state.countRead()
                if !text.hasSuffix("fleettrust_scan_exit_status 0\n") { state.record("a partial file of \(data.count) bytes") }
                do { _ = try PrometheusExposition(parsing: text) } catch { state.record("\(error)") }
            }
        }
        reader.start()
        for _ in 0..<6 {
            let run = try scan(["--replay", recorded, "--known-hosts", knownHosts, "--format", "prometheus", "--output", target])
            XCTAssertEqual(run.status, 0, run.stderrText)
            XCTAssertEqual(run.stdout, [], "the metrics go to the file only")
        }
        state.stop()
        while !reader.isFinished { usleep(1_000) }
        XCTAssertEqual(state.problems, [])
        XCTAssertGreaterThan(state.reads, 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory), ["fleettrust.prom"], "no temporary file left")
        let mask = umask(0o022)
        umask(mask)
        let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: target)[.posixPermissions] as? Int)
        XCTAssertEqual(mode, 0o666 & ~Int(mask), "readable by a collector running as another user")

        let nowhere = try scan(["--replay", recorded, "--known-hosts", knownHosts, "--format", "prometheus",
                                "--output", directory + "/missing/dir/x.prom"])
        XCTAssertEqual(nowhere.status, 64)
        XCTAssertTrue(nowhere.stderrText.contains("cannot write"), nowhere.stderrText)

        // --dry-run of a replay needs no inventory: it lists the recording's hosts.
        let plan = try scan(["--replay", recorded, "--known-hosts", knownHosts, "--dry-run"])
        XCTAssertEqual(plan.status, 0, plan.stderrText)
        for host in fleet.hosts { XCTAssertTrue(plan.stdoutText.contains(host.endpoints[0].label), plan.stdoutText) }
        XCTAssertTrue(plan.stdoutText.contains("would probe 2 hosts; "), plan.stdoutText)
    }

    func testKnownHostsFormatHonoursHashKnownHosts() throws {
        let fleet = try TestFleet.start(hosts: 3)
        defer { fleet.stop() }
        let newHost = fleet.hosts[2]
        let common = ["--inventory", fleet.inventoryPath, "--known-hosts", fleet.knownHostsPath, "--format", "known-hosts",
                      "--trust-on-first-use"]
        let plain = try scan(common + ["--hash-known-hosts", "no"])
        // First use prints the key ssh meets (Ed25519 first), as StrictHostKeyChecking=accept-new saves.
        let meets = newHost.publicKeys.filter { $0.type == "ssh-ed25519" }
        XCTAssertTrue(plain.stderrText.contains("not saved: "), plain.stderrText)
        XCTAssertEqual(plain.stdoutText.split(separator: "\n").map(String.init).sorted(),
                       (["# \(newHost.endpoints[0].label) (\(newHost.endpoints[0].label)): proved by trust on first use"]
                        + meets.map { "\(newHost.knownHostsName) \($0.openSSHLine)" }).sorted())
        let hashed = try scan(common + ["--hash-known-hosts", "yes"])
        let lines = hashed.stdoutText.split(separator: "\n")
        XCTAssertEqual(lines.count, meets.count + 1)
        XCTAssertEqual(lines.first, "# a host whose name is hashed: proved by trust on first use", hashed.stdoutText)
        XCTAssertTrue(lines.dropFirst().allSatisfy { $0.hasPrefix("|1|") }, hashed.stdoutText)
        for output in [plain, hashed] {
            let file = fleet.directory + "/scanned_known_hosts"
            try Data(output.stdout).write(to: URL(fileURLWithPath: file))
            let ssh = try SSHOracle.check(name: newHost.address, port: newHost.port, knownHosts: file)
            XCTAssertEqual(ssh.verdict, .trusted, ssh.transcript)
        }
    }

    /// The same gate as `sync`: a new host's keys, proved only by a key exchange, are printed
    /// ready to append only with --trust-on-first-use or when a pin proves them.
    func testKnownHostsFormatPrintsNoUnpinnedNewHostWithoutTrustOnFirstUse() throws {
        let fleet = try TestFleet.start(hosts: 3)
        defer { fleet.stop() }
        let newHost = fleet.hosts[2]
        let common = ["--inventory", fleet.inventoryPath, "--known-hosts", fleet.knownHostsPath, "--format", "known-hosts",
                      "--hash-known-hosts", "no"]
        let gated = try scan(common)
        XCTAssertEqual(gated.stdoutText, "", "no unproved key is printed ready to append")
        XCTAssertTrue(gated.stderrText.contains("\(newHost.endpoints[0].label): not printed: new, and no pin proves its keys"),
                      gated.stderrText)
        let pins = fleet.directory + "/scan-pins"
        try "\(newHost.knownHostsName) \(newHost.publicKeys.map(\.sha256Fingerprint).joined(separator: " "))\n"
            .write(toFile: pins, atomically: true, encoding: .utf8)
        let pinned = try scan(common + ["--pins", pins])
        XCTAssertTrue(pinned.stdoutText.hasPrefix("# \(newHost.endpoints[0].label) (\(newHost.endpoints[0].label)): proved by pin\n"),
                      pinned.stdoutText + pinned.stderrText)
        let file = fleet.directory + "/pinned_known_hosts"
        try Data(pinned.stdout).write(to: URL(fileURLWithPath: file))
        XCTAssertEqual(try SSHOracle.check(name: newHost.address, port: newHost.port, knownHosts: file).verdict, .trusted)
        XCTAssertEqual(try scan(["--inventory", fleet.inventoryPath, "--trust-on-first-use"]).status, 64,
                       "--trust-on-first-use means nothing for a table")
    }

    /// Lines ssh ignores are named once on stderr, not only by tidy.
    func testKnownHostsLinesSshIgnoresAreNamedOnce() throws {
        let directory = NSTemporaryDirectory() + "ignored-lines-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICa+KH5Vx9v59VXPMsxNGf4dP8Zd8JjLkSjMzPVMUHCW"
        try "web1 \(key)\nweb2 ssh-ed25519 not*base64\n@cert-authorty * \(key)\nweb3 ssh-ed25519\n"
            .write(toFile: directory + "/kh", atomically: true, encoding: .utf8)
        try "127.0.0.1:1\n".write(toFile: directory + "/hosts", atomically: true, encoding: .utf8)
        let run = try scan(["--inventory", directory + "/hosts", "--known-hosts", directory + "/kh", "--no-history", "--timeout", "5"])
        let warnings = run.stderrText.split(separator: "\n").filter { $0.contains("ssh ignores") }
        XCTAssertEqual(warnings.count, 1, run.stderrText)
        XCTAssertTrue(warnings.first?.contains("\(directory)/kh: ssh ignores line 2 (key data is not valid base64), line 3 (unknown marker), "
                                               + "line 4 (key type without key data)") == true, run.stderrText)
    }

    func testDryRunJsonListsHostsNamesFilesAndRoutesWithoutProbing() throws {
        let silent = try SilentListener()
        defer { silent.close() }
        let directory = NSTemporaryDirectory() + "/dry-json-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try """
            Host behind
              HostName 127.0.0.1
              Port \(silent.port)
              ProxyJump admin@bastion.invalid
            Host front
              HostName 127.0.0.1
              Port \(silent.port)
              HostKeyAlias Front-Alias
              User deploy
            """.write(toFile: directory + "/config", atomically: true, encoding: .utf8)
        try "[127.0.0.1]:\(silent.port) ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n"
            .write(toFile: directory + "/kh", atomically: true, encoding: .utf8)
        let run = try scan(["--inventory", directory + "/config", "--known-hosts", directory + "/kh", "--dry-run", "--format", "json",
                            "--timeout", "30"])
        XCTAssertEqual(run.status, 0, run.stderrText)
        XCTAssertLessThan(run.seconds, 10, "nothing is probed")
        let plan = try json(run)
        XCTAssertEqual(plan["dry_run"] as? Bool, true)
        let hosts = try XCTUnwrap(plan["hosts"] as? [[String: Any]])
        XCTAssertEqual(hosts.map { $0["name"] as? String }, ["behind", "front"])
        XCTAssertEqual(hosts.map { $0["host"] as? String }, ["127.0.0.1", "127.0.0.1"])
        XCTAssertEqual(hosts.map { $0["port"] as? Int }, [silent.port, silent.port])
        XCTAssertEqual(hosts.map { $0["known_hosts_name"] as? String }, ["[127.0.0.1]:\(silent.port)", "front-alias"])
        XCTAssertEqual(hosts[1]["user"] as? String, "deploy")
        XCTAssertEqual(hosts[0]["known_hosts_files"] as? [String], [directory + "/kh"])
        let routes = hosts.compactMap { $0["route"] as? [String: Any] }
        XCTAssertEqual(routes.map { $0["probe"] as? String }, ["proxy", "direct"])
        XCTAssertEqual(routes[0]["proxy"] as? String, "ProxyJump admin@bastion.invalid")
        XCTAssertTrue(routes[1].keys.contains("proxy") && routes[1]["proxy"] is NSNull)
        let summary = try XCTUnwrap(plan["summary"] as? [String: Any])
        XCTAssertEqual(summary["total"] as? Int, 2)
        XCTAssertEqual(summary["probed"] as? Int, 2)
        XCTAssertEqual(summary["known_hosts_lines"] as? Int, 1)
        XCTAssertEqual((plan["skipped"] as? [Any])?.count, 0)

        let table = try scan(["--inventory", directory + "/config", "--known-hosts", directory + "/kh", "--dry-run"])
        XCTAssertTrue(table.stdoutText.hasSuffix("would probe 2 hosts; 1 known_hosts line read from 1 file\n"), table.stdoutText)
        XCTAssertEqual(table.stdoutText.split(separator: "\n").count, 3, "a line per host, then the count: \(table.stdoutText)")
        XCTAssertEqual(try scan(["--inventory", directory + "/config", "--dry-run", "--format", "prometheus"]).status, 64)
    }

    func testSkippedInventoryEntriesAreListedAndMakeTheExitStatusOne() throws {
        let fleet = try TestFleet.start(hosts: 2)
        defer { fleet.stop() }
        let inventory = fleet.directory + "/with-a-bad-line.txt"
        try [fleet.hosts[0].endpoints[0].label, "two words here", fleet.hosts[1].endpoints[0].label]
            .joined(separator: "\n").write(toFile: inventory, atomically: true, encoding: .utf8)
        let common = ["--inventory", inventory, "--known-hosts", fleet.knownHostsPath]
        XCTAssertEqual(try scan(["--inventory", fleet.inventoryPath, "--known-hosts", fleet.knownHostsPath]).status, 0,
                       "both hosts are trusted")

        let run = try scan(common + ["--format", "json"])
        XCTAssertEqual(run.status, 1, "a skipped entry is never silent")
        let document = try json(run)
        let skipped = try XCTUnwrap(document["skipped"] as? [[String: Any]])
        XCTAssertEqual(skipped.count, 1)
        XCTAssertEqual(skipped.first?["file"] as? String, inventory)
        XCTAssertEqual(skipped.first?["line"] as? Int, 2)
        XCTAssertTrue((skipped.first?["reason"] as? String ?? "").contains("expected one host per line"), "\(skipped)")
        XCTAssertEqual((document["summary"] as? [String: Any])?["exit_status"] as? Int, 1)
        XCTAssertEqual(try RecordedScan.decode(Data(run.stdout)).hosts.map(\.status), [.trusted, .trusted], "the document still replays")

        let table = try scan(common)
        XCTAssertEqual(table.status, 1)
        XCTAssertTrue(table.stdoutText.contains("Skipped inventory entries"), table.stdoutText)
        XCTAssertTrue(table.stdoutText.contains("  \(inventory):2: expected one host per line"), table.stdoutText)

        let plan = try scan(common + ["--dry-run", "--format", "json"])
        XCTAssertEqual(plan.status, 1)
        XCTAssertEqual((try json(plan)["skipped"] as? [Any])?.count, 1)

        let metrics = try PrometheusExposition(parsing: try scan(common + ["--format", "prometheus"]).stdoutText)
        XCTAssertEqual(metrics.samples(named: "fleettrust_inventory_skipped_entries").first?.value, 1)
        XCTAssertEqual(metrics.samples(named: "fleettrust_scan_exit_status").first?.value, 1)
    }
}

/// What the reader thread of the atomicity test saw.
private final class ReaderState: @unchecked Sendable {
    private let lock = NSLock()
    private var _stopped = false
    private var _problems: [String] = []
    private var _reads = 0

    var stopped: Bool { lock.withLock { _stopped } }
    var problems: [String] { lock.withLock { _problems } }
    var reads: Int { lock.withLock { _reads } }
    func stop() { lock.withLock { _stopped = true } }
    func record(_ problem: String) { lock.withLock { _problems.append(problem) } }
    func countRead() { lock.withLock { _reads += 1 } }
}
