import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// One judgement per host, every rendering of it: over one real fleet covering every status and
/// every per-key verdict the product has (ip-mismatch aside: ssh turns CheckHostIP off for
/// loopback peers), `scan --format json`, `scan --format table`, `scan --replay` of that JSON and
/// the dashboard (list row and detail view, in tmux) must say the same thing about each host.
final class OneTruthConsistencyTests: XCTestCase {
    /// A host of the fleet: its inventory name, where it listens, what it must come out as.
    struct Member {
        var name: String
        var port: Int
        var status: HostStatus
    }

    private var fleet: TestFleet?
    private var servers: [FakeKeyServer] = []
    private var terminal: DashboardTmux?
    private var scratch = ""

    override func tearDown() {
        terminal?.stop()
        for server in servers { server.stop() }
        servers = []
        fleet?.stop()
        if !scratch.isEmpty { try? FileManager.default.removeItem(atPath: scratch) }
    }

    private func path(_ name: String) -> String { scratch + "/" + name }

    /// The fleet: TestFleet's sample hosts (trusted by CA, trusted, new, changed, revoked) plus a
    /// pinned host presenting other keys than the pin's, a fake server presenting a forged
    /// certificate beside its plain key, a fake server offering only `ssh-rsa`, and a closed port.
    /// Pins: the trusted host pinned to its Ed25519 key (match), the new host's pin expired.
    private func makeFleet() throws -> (members: [Member], inventory: String, knownHosts: String, pins: String) {
        scratch = NSTemporaryDirectory() + "one-truth-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        var options = TestFleet.Options(hosts: 6)
        options.rsaBits = 2048
        let fleet = try TestFleet(options)
        self.fleet = fleet

        // The forged certificate: an attacker's Ed25519 key, certified by a CA, one bit of the CA signature flipped.
        try KeyFiles.generate(type: "ed25519", path: path("attacker"))
        try KeyFiles.generate(type: "ed25519", path: path("ca"))
        try KeyFiles.generate(type: "rsa", bits: 2048, path: path("sha1only"))
        let certificate = try KeyFiles.certify(publicKeyPath: path("attacker.pub"), caPath: path("ca"), identity: "forged",
                                               principals: ["127.0.0.1"], output: path("forged-cert.pub"))
        let forged = try OddCertificates.forged(try KeyFiles.blob(publicKeyFile: certificate))
        let forgedServer = try FakeKeyServer(keys: [
            FakeHostKey(privateKeyPath: path("attacker"), presentedBlob: forged, algorithms: ["ssh-ed25519-cert-v01@openssh.com"]),
            try FakeHostKey.plain(path("attacker"), algorithms: ["ssh-ed25519"]),
        ])
        servers.append(forgedServer)
        let sha1Server = try FakeKeyServer(keys: [try FakeHostKey.plain(path("sha1only"), algorithms: ["ssh-rsa"])])
        servers.append(sha1Server)
        let closedPort = try Loopback.freePort()

        let hosts = fleet.hosts
        let members = [
            Member(name: "h-ca", port: hosts[0].port, status: .trusted),
            Member(name: "h-kh", port: hosts[1].port, status: .trusted),
            Member(name: "h-new", port: hosts[2].port, status: .new),
            Member(name: "h-changed", port: hosts[3].port, status: .changed),
            Member(name: "h-revoked", port: hosts[4].port, status: .revoked),
            Member(name: "h-pinned", port: hosts[5].port, status: .pinMismatch),
            Member(name: "h-forged", port: forgedServer.port, status: .invalidCertificate),
            Member(name: "h-sha1only", port: sha1Server.port, status: .error),
            Member(name: "h-closed", port: closedPort, status: .unreachable),
        ]
        let inventory = path("inventory.ssh_config")
        try members.map { "Host \($0.name)\n  HostName 127.0.0.1\n  Port \($0.port)\n" }.joined()
            .write(toFile: inventory, atomically: true, encoding: .utf8)

        // The sample known_hosts, plus the pinned host's keys (known_hosts trusts it; the pin does not).
        let knownHosts = path("known_hosts")
        let sample = try String(contentsOfFile: fleet.knownHostsPath, encoding: .utf8)
        try (sample + hosts[5].publicKeys.map { "\(hosts[5].knownHostsName) \($0.openSSHLine)\n" }.joined())
            .write(toFile: knownHosts, atomically: true, encoding: .utf8)

        let pins = path("pins")
        let stranger = try TestFleet.throwawayKey(in: scratch)
        try """
            # one-truth pins
            h-kh        \(hosts[1].key(ofType: "ssh-ed25519")!.sha256Fingerprint)
            h-new       \(hosts[2].key(ofType: "ssh-ed25519")!.sha256Fingerprint) expires=2020-01-31
            h-pinned    \(stranger.sha256Fingerprint)

            """.write(toFile: pins, atomically: true, encoding: .utf8)
        return (members, inventory, knownHosts, pins)
    }

    private func document(_ run: ProgramRun, _ what: String, file: StaticString = #filePath, line: UInt = #line) throws -> RecordedScan {
        do {
            return try RecordedScan.decode(Data(run.stdout))
        } catch {
            XCTFail("\(what): not a scan document (status \(run.status)): \(error)\n\(run.stderrText)", file: file, line: line)
            throw error
        }
    }

    func testEveryOutputRendersTheSameJudgementOfEveryHost() throws {
        let started = Date()
        let (members, inventory, knownHosts, pins) = try makeFleet()
        let common = ["--known-hosts", knownHosts, "--pins", pins]
        let probe = ["scan", "--inventory", inventory, "--inventory-format", "ssh-config", "--timeout", "5"] + common

        // 1. JSON: the reference. First, that the fleet really covers every status and verdict.
        let jsonRun = try ProgramRun.run(BuiltProducts.fleettrust, probe + ["--format", "json"], limit: 120)
        let json = try document(jsonRun, "scan --format json")
        XCTAssertEqual(jsonRun.status, 2, "a changed, revoked, pin-mismatch or invalid host makes scan exit 2")
        XCTAssertEqual(json.summary.exitStatus, 2)
        XCTAssertEqual(json.hosts.map(\.name), members.map(\.name))
        guard json.hosts.count == members.count else { return }
        let hosts = Dictionary(uniqueKeysWithValues: json.hosts.map { ($0.name, $0) })
        for member in members {
            XCTAssertEqual(hosts[member.name]?.status, member.status, "\(member.name): \(hosts[member.name]?.reason ?? "")")
        }
        XCTAssertEqual(hosts["h-ca"]?.method, "cert-authority")
        XCTAssertEqual(hosts["h-kh"]?.method, "known-hosts+pin")
        XCTAssertEqual(hosts["h-kh"]?.pin?.verdict, .matched)
        XCTAssertEqual(hosts["h-new"]?.pin?.verdict, .expired)
        XCTAssertEqual(hosts["h-pinned"]?.pin?.verdict, .mismatch)
        XCTAssertEqual(hosts["h-changed"]?.keys.map(\.verdict), [.changed, .notRecorded, .notRecorded])
        XCTAssertEqual(hosts["h-sha1only"]?.error?.stage, "host-key")
        XCTAssertEqual(hosts["h-sha1only"]?.error?.code, .noMatchingHostKeyType)
        XCTAssertEqual(hosts["h-closed"]?.error?.stage, "connect")
        XCTAssertEqual(hosts["h-closed"]?.error?.code, .connectionRefused)
        let forgedCertificate = hosts["h-forged"]?.keys.first { $0.type.hasSuffix("-cert-v01@openssh.com") }
        XCTAssertEqual(forgedCertificate?.verdict, .invalidCertificate)
        XCTAssertEqual(forgedCertificate?.certificate?.problem, .badSignature)
        let verdicts = Set(json.hosts.flatMap { $0.keys.map(\.verdict) })
        XCTAssertEqual(verdicts, Set(KeyVerdict.allCases).subtracting([.ipMismatch]), "every per-key verdict but ip-mismatch is covered")
        let keyPins = Set(json.hosts.flatMap { $0.keys.map(\.pin) })
        XCTAssertTrue(keyPins.isSuperset(of: [.matched, .notListed, .mismatch, .expired, .unpinned]), "\(keyPins)")
        print("one-truth: json scan \(String(format: "%.1f", jsonRun.seconds)) s")

        // 2. The table: the same status, name, endpoint, keys, pin answer and reason per host.
        let tableRun = try ProgramRun.run(BuiltProducts.fleettrust, probe + ["--format", "table"], limit: 120)
        XCTAssertEqual(tableRun.status, 2, "the table's exit status is the JSON's")
        checkTable(tableRun.stdoutText, against: json)

        // 3. The replay of the JSON, judged again against the same files: the same judgement.
        let recorded = path("recorded.json")
        try Data(jsonRun.stdout).write(to: URL(fileURLWithPath: recorded))
        let replayRun = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--replay", recorded, "--format", "json"] + common, limit: 60)
        XCTAssertEqual(replayRun.status, 2, "the replay's exit status is the scan's")
        let replay = try document(replayRun, "scan --replay")
        var judgedAgain = json.summary
        judgedAgain.byDrift = [:]
        XCTAssertEqual(replay.summary, judgedAgain, "the same summary, without drift: a replay judges none")
        XCTAssertEqual(replay.hosts.map(\.name), json.hosts.map(\.name))
        for (original, again) in zip(json.hosts, replay.hosts) { checkSameJudgement(again, original, "replay") }

        // 4. The dashboard on the same inventory, known_hosts and pins.
        print("one-truth: scans done after \(Int(Date().timeIntervalSince(started))) s")
        try checkDashboard(arguments: ["--inventory", inventory, "--inventory-format", "ssh-config", "--read-only"] + common,
                           json: json)
        print("one-truth: took \(Int(Date().timeIntervalSince(started))) s")
    }

    // MARK: - Table

    private func checkTable(_ text: String, against json: RecordedScan) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let titles = ["STATUS", "NAME", "ENDPOINT", "KEYS", "PIN", "POLICY", "DRIFT", "REASON"]
        guard let header = lines.first, let columns = ColumnReader(header: header, titles: titles) else {
            return XCTFail("no table header:\n\(text)")
        }
        let rows = Array(lines.dropFirst().prefix(json.hosts.count))
        XCTAssertEqual(rows.count, json.hosts.count, text)
        for (row, host) in zip(rows, json.hosts) {
            let cells = columns.cells(row)
            let what = "table row for \(host.name): \(row)"
            XCTAssertEqual(cells["STATUS"], host.status.rawValue, what)
            XCTAssertEqual(cells["NAME"], host.name, what)
            XCTAssertEqual(cells["ENDPOINT"], "\(host.host):\(host.port)", what)
            let keysWidth = columns.width(of: "KEYS", separator: 2) ?? 40
            XCTAssertEqual(cells["KEYS"], OneTruthRendering.fitted(OneTruthRendering.tableKeys(host), width: keysWidth), what)
            XCTAssertEqual(cells["PIN"], host.pin?.verdict == .unpinned ? "-" : host.pin?.verdict.rawValue, what)
            XCTAssertEqual(cells["POLICY"], host.policy, what)
            XCTAssertEqual(cells["DRIFT"], host.drift?.rawValue ?? "-", what)
            let shared = host.keys.compactMap(\.sharedBy).max().map { "; key shared by \($0) hosts" } ?? ""
            XCTAssertEqual(cells["REASON"], host.reason + shared, what)
        }
        var counts: [HostStatus: Int] = [:]
        for host in json.hosts { counts[host.status, default: 0] += 1 }
        let summary = "\(json.hosts.count) hosts: "
            + HostStatus.allCases.compactMap { status in counts[status].map { "\($0) \(status.rawValue)" } }.joined(separator: ", ")
        XCTAssertTrue(lines.contains(summary), "the table's counts are the JSON's: \(summary)\n\(text)")
    }

    // MARK: - Replay

    private func checkSameJudgement(_ again: RecordedScan.Host, _ original: RecordedScan.Host, _ what: String) {
        let name = "\(what) of \(original.name)"
        XCTAssertEqual(again.status, original.status, name)
        XCTAssertEqual(again.reason, original.reason, name)
        XCTAssertEqual(again.method, original.method, name)
        XCTAssertEqual(again.knownHostsName, original.knownHostsName, name)
        XCTAssertEqual(again.pin, original.pin, name)
        XCTAssertEqual(again.error?.stage, original.error?.stage, name)
        XCTAssertEqual(again.error?.code, original.error?.code, name)
        XCTAssertEqual(again.negotiatedAlgorithm, original.negotiatedAlgorithm, name)
        XCTAssertEqual(again.stricterThanSSH, original.stricterThanSSH, name)
        XCTAssertEqual(again.keys.count, original.keys.count, name)
        for (key, before) in zip(again.keys, original.keys) {
            let which = "\(name), key \(before.type) \(before.fingerprint ?? "")"
            XCTAssertEqual(key.type, before.type, which)
            XCTAssertEqual(key.fingerprint, before.fingerprint, which)
            XCTAssertEqual(key.verdict, before.verdict, which)
            XCTAssertEqual(key.pin, before.pin, which)
            XCTAssertEqual(key.negotiated, before.negotiated, which)
            XCTAssertEqual(key.unusable, before.unusable, which)
            XCTAssertEqual(key.evidence, before.evidence, which)
            XCTAssertEqual(key.certificate?.problem, before.certificate?.problem, which)
        }
    }

    // MARK: - Dashboard

    private func checkDashboard(arguments: [String], json: RecordedScan) throws {
        let terminal = try DashboardTmux(arguments: arguments, width: 200, height: 90)
        self.terminal = terminal
        let names = json.hosts.map(\.name)
        var columns: ColumnReader?
        func rows(_ screen: String) -> [String: [String: String]] {
            let lines = screen.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            guard let header = lines.first(where: { $0.contains("STATUS") && $0.contains("KNOWN_H") }),
                  let reader = ColumnReader(header: header, titles: ["STATUS", "NAME", "ADDRESS:PORT", "KEY TYPES", "FINGERPRINT",
                                                                     "KNOWN_H", "PIN", "METHOD", "RTT"]) else { return [:] }
            columns = reader
            var found: [String: [String: String]] = [:]
            for line in lines {
                let cells = reader.cells(line)
                if let name = cells["NAME"], names.contains(name) { found[name] = cells }
            }
            return found
        }
        let (loaded, screen) = terminal.waitFor(timeout: 60) { screen in
            let found = rows(screen)
            return found.count == names.count && found.values.allSatisfy { cells in
                let status = cells["STATUS"] ?? ""
                return !status.hasPrefix(".") && !status.contains("scanning")
            }
        }
        XCTAssertTrue(loaded, "every host judged on the dashboard:\n\(screen)")
        XCTAssertNotNil(columns, "the list's column header:\n\(screen)")
        let list = rows(screen)
        for host in json.hosts {
            guard let cells = list[host.name] else { XCTFail("no row for \(host.name):\n\(screen)"); continue }
            let what = "dashboard row for \(host.name): \(cells)"
            XCTAssertEqual(cells["STATUS"], "\(OneTruthRendering.letter(host.status)) \(OneTruthRendering.listWord(host.status))", what)
            XCTAssertEqual(cells["KNOWN_H"], OneTruthRendering.knownHostsCode(host), what)
            XCTAssertEqual(cells["PIN"], OneTruthRendering.pinCode(host.pin?.verdict), what)
            XCTAssertEqual(cells["METHOD"], OneTruthRendering.methodCode(host.method), what)
            XCTAssertEqual(cells["ADDRESS:PORT"], "\(host.host):\(host.port)", what)
            if let negotiated = host.keys.first(where: \.negotiated), let fingerprint = negotiated.fingerprint,
               let shown = cells["FINGERPRINT"], !shown.contains("…") {
                XCTAssertEqual(shown, fingerprint, "\(what): the fingerprint of the key ssh meets")
            }
        }

        // The detail view of each host: every key's `known_hosts: VERDICT   pin: PIN`, in order.
        var filter = ""
        for host in json.hosts {
            terminal.send("/")
            if !filter.isEmpty { _ = try? terminal.tmux(["send-keys", "-t", terminal.session] + Array(repeating: "BSpace", count: filter.count)) }
            terminal.type(host.name)
            terminal.send("Enter")
            filter = host.name
            let (selected, listed) = terminal.waitFor { $0.contains(" 1 shown ·") && $0.contains("· /\(host.name)") && rows($0)[host.name] != nil }
            XCTAssertTrue(selected, "the filter /\(host.name) selects one host:\n\(listed)")
            guard selected else { continue }
            terminal.send("Enter")
            let expected = host.keys.map {
                "known_hosts: \($0.verdict.rawValue)   pin: \($0.pin.rawValue)   proof: \(OneTruthRendering.proof(verdict: $0.verdict, pin: $0.pin))"
            }
            let statusLine = " \(OneTruthRendering.letter(host.status)) \(host.status.rawValue)"
            let (opened, detail) = terminal.waitFor { screen in
                let lines = screen.split(separator: "\n").map(String.init)
                return lines.contains { $0.hasPrefix(" \(host.name)  \(host.host):\(host.port)") }
                    && lines.contains { $0 == statusLine || $0.hasPrefix(statusLine + " ") }
                    && Self.keyLines(screen).count >= expected.count
            }
            XCTAssertTrue(opened, "detail view of \(host.name) with status \(statusLine) and \(expected.count) keys:\n\(detail)")
            XCTAssertEqual(Self.keyLines(detail), expected, "detail view of \(host.name):\n\(detail)")
            if let error = host.error {
                XCTAssertTrue(detail.contains("failed at \(error.stage) (\(error.code.rawValue))"), "detail view of \(host.name) names the failure:\n\(detail)")
            }
            terminal.send("Enter")
            XCTAssertTrue(terminal.waitFor { $0.contains("KNOWN_H") }.0, "back to the list from \(host.name)'s detail view")
        }
        terminal.send("q")
        XCTAssertTrue(terminal.waitFor { $0.contains(DashboardTmux.exitMarker + "0") }.0, "the dashboard quits: \(terminal.capture())")
    }

    /// The detail view's per-key verdict lines, in order.
    static func keyLines(_ screen: String) -> [String] {
        screen.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { $0.hasPrefix("known_hosts: ") && $0.contains("   pin: ") }
    }
}
