import XCTest
@testable import FleetTrustCore

/// `merge`: many reports become one version 3 document, every entry keeping its scanner, the
/// shared keys counted over the whole, split views found, bad input refused by file and index.
final class ReportMergeTests: XCTestCase {
    private var directory: StoreTestDirectory!
    private let date = Date(timeIntervalSince1970: 1_790_000_000)

    override func setUpWithError() throws { directory = try StoreTestDirectory() }
    override func tearDown() { directory.remove() }

    /// A report from `scanner`: each host with the keys it proved (none: unreachable).
    private func report(_ name: String, scanner: String, _ hosts: [(String, [HostKey])]) throws -> String {
        try report(name, scanner: scanner, hosts.map { (InventoryHost(name: $0.0), $0.1) })
    }

    private func report(_ name: String, scanner: String, _ hosts: [(InventoryHost, [HostKey])]) throws -> String {
        let judge = FleetJudge(knownHosts: KnownHosts(files: []), pins: nil)
        let judged = hosts.map { host, keys -> JudgedHost in
            var probe = keys.isEmpty
                ? ProbeResult(host: host.address, port: host.port, failures: [ProbeFailure(stage: .connect, code: .connectionRefused, message: "refused")])
                : ProbeResult(host: host.address, port: host.port, keys: keys.map { DiscoveredKey(key: $0) })
            probe.scanner = CleanText(scanner)
            probe.finishedAt = date
            return judge.judge(host, probe)
        }
        let data = try ScanReport(generatedAt: date, knownHostsFiles: [], pinFiles: [], judged: judged).encoded()
        try directory.write(name, String(decoding: data, as: UTF8.self))
        return directory.file(name)
    }

    private func merged(_ files: [String]) throws -> (Data, ReportMerge.Survey) {
        let merge = ReportMerge(files: files)
        let survey = try merge.survey()
        var out = Data()
        try merge.write(survey, generatedAt: date) { out.append($0) }
        return (out, survey)
    }

    func testReportsFromTwoScannersBecomeOneDocumentWithEachEntrysScanner() throws {
        let eu = try report("eu.json", scanner: "jump-eu", [("web1", [TestKeys.a]), ("db1", [TestKeys.b]), ("down", [])])
        let us = try report("us.json", scanner: "jump-us", [("web1", [TestKeys.c]), ("app", [TestKeys.a]), ("down", [TestKeys.b])])
        let (data, survey) = try merged([eu, us])
        let document = try RecordedScan.decode(data)
        XCTAssertEqual(document.version, 3)
        XCTAssertEqual(document.hosts.map(\.name), ["web1", "db1", "down", "web1", "app", "down"])
        XCTAssertEqual(document.hosts.map(\.scannedFrom), ["jump-eu", "jump-eu", "jump-eu", "jump-us", "jump-us", "jump-us"])
        XCTAssertEqual(document.mergedFrom, [RecordedScan.MergedReport(scanner: "jump-eu", generatedAt: "2026-09-21T14:13:20Z", hosts: 3, file: eu),
                                             RecordedScan.MergedReport(scanner: "jump-us", generatedAt: "2026-09-21T14:13:20Z", hosts: 3, file: us)])
        XCTAssertEqual(document.sharedKeys.map(\.fingerprint), [TestKeys.a.sha256Fingerprint, TestKeys.b.sha256Fingerprint].sorted())
        XCTAssertEqual(Dictionary(uniqueKeysWithValues: document.sharedKeys.map { ($0.fingerprint, $0.hosts) }),
                       [TestKeys.a.sha256Fingerprint: ["app", "web1"], TestKeys.b.sha256Fingerprint: ["db1", "down"]])
        XCTAssertEqual(document.hosts.map { $0.keys.map(\.sharedBy) }, [[2], [2], [], [nil], [2], [2]],
                       "shared_by counts names over the merged document")
        XCTAssertEqual(survey.splitViews, [SplitView(name: "web1", port: 22, scanners: ["jump-eu", "jump-us"])],
                       "down proved keys from one scanner only: not a split view")
        XCTAssertEqual(document.summary.total, 6)
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        XCTAssertEqual(lines.filter { $0.hasPrefix("{\"address\"") }.count, 6, "one host per line")
        XCTAssertTrue(lines.contains(#"  "split_views" : [{"name":"web1","port":22,"scanners":["jump-eu","jump-us"]}],"#))
        let replayed = try ScanReplay.load(data, source: "merged.json")
        XCTAssertEqual(replayed.map { $0.result.scanner?.value }, document.hosts.map(\.scannedFrom))
    }

    func testTheSameKeysFromTwoScannersAreNoSplitView() throws {
        let eu = try report("eu.json", scanner: "eu", [("web1", [TestKeys.a, TestKeys.ecdsa])])
        let us = try report("us.json", scanner: "us", [("web1", [TestKeys.ecdsa, TestKeys.a])])
        let (data, survey) = try merged([eu, us])
        XCTAssertEqual(survey.splitViews, [])
        XCTAssertEqual(try RecordedScan.decode(data).sharedKeys, [], "one name proved twice shares no key")
    }

    func testASplitViewNeedsTwoScannersThatProvedDifferentKeys() {
        var finder = SplitViewFinder()
        finder.add(name: "web1", port: 22, scanner: "eu", fingerprints: ["SHA256:a", "SHA256:b"])
        finder.add(name: "web1", port: 22, scanner: "us", fingerprints: ["SHA256:b", "SHA256:a"])
        finder.add(name: "web1", port: 2222, scanner: "eu", fingerprints: ["SHA256:a"])
        finder.add(name: "web1", port: 2222, scanner: "eu", fingerprints: ["SHA256:c"])
        finder.add(name: "db1", port: 22, scanner: "eu", fingerprints: ["SHA256:a"])
        finder.add(name: "db1", port: 22, scanner: "us", fingerprints: [])
        XCTAssertEqual(finder.splitViews(), [], "same keys; one scanner twice; a scanner that proved nothing")
        finder.add(name: "web1", port: 2222, scanner: "asia", fingerprints: ["SHA256:a"])
        finder.add(name: "db1", port: 22, scanner: "asia", fingerprints: ["SHA256:d"])
        XCTAssertEqual(finder.splitViews(), [SplitView(name: "db1", port: 22, scanners: ["asia", "eu"]),
                                             SplitView(name: "web1", port: 2222, scanners: ["asia", "eu"])])
    }

    func testMergeAndReplayOfTheSameReportsRaiseTheSamePairsAndTheSameSummary() throws {
        // Spellings `ssh` looks up under one name, a scanner that agrees, one that reached nothing.
        let eu = try report("eu.json", scanner: "eu", [
            (InventoryHost(name: "web.example.com"), [TestKeys.a]), (InventoryHost(name: "db1"), [TestKeys.b]),
            (InventoryHost(name: "app", address: "10.1.2.3", hostKeyAlias: "app.example.com"), [TestKeys.a]),
            (InventoryHost(name: "same"), [TestKeys.ecdsa]), (InventoryHost(name: "down"), [TestKeys.b]),
        ])
        let us = try report("us.json", scanner: "us", [
            (InventoryHost(name: "web-alias", address: "WEB.example.com"), [TestKeys.c]), (InventoryHost(name: "DB1"), [TestKeys.c]),
            (InventoryHost(name: "app2", address: "10.9.9.9", hostKeyAlias: "App.Example.Com"), [TestKeys.b]),
            (InventoryHost(name: "same"), [TestKeys.ecdsa]), (InventoryHost(name: "down"), []),
        ])
        let (data, survey) = try merged([eu, us])
        let pairs = try ScanReplay.load(data, source: "merged.json")
        let found = SplitViewWitness.find(hosts: pairs.map(\.host), results: pairs.map(\.result))
        XCTAssertEqual(Set(found.keys), [0, 1, 2, 5, 6, 7], "web, db1 and app, by either spelling")
        XCTAssertEqual(Set(survey.splitViews.map(\.name)), Set(found.keys.map { pairs[$0].host.name }),
                       "merge names every entry replay judges split-view")
        let judge = FleetJudge(knownHosts: KnownHosts(files: []), pins: nil)
        let judged = pairs.indices.map { judge.judge(pairs[$0].host, pairs[$0].result, splitView: found[$0] ?? []) }
        XCTAssertEqual(survey.summary.byStatus, judged.reduce(into: [:]) { $0[$1.status.rawValue, default: 0] += 1 })
        XCTAssertEqual(survey.summary.exitStatus, ExitStatusRule.hosts(judged))
        XCTAssertEqual(survey.summary.exitStatus, 2)
    }

    func testAVersionTwoReportIsReadWholeAndItsEntriesGetAScannerAndTime() throws {
        let key = TestKeys.a.openSSHLine
        try directory.write("old.json", """
            {
              "generated_at" : "2026-01-02T03:04:05Z",
              "hosts" : [
                {
                  "name" : "web1", "host" : "web1", "port" : 22, "status" : "new",
                  "keys" : [ { "type" : "ssh-ed25519", "key" : "\(key)", "verdict" : "new",
                               "fingerprint" : "\(TestKeys.a.sha256Fingerprint)" } ],
                  "shares_keys_with" : [ "web2" ]
                }
              ],
              "summary" : { "total" : 1, "by_status" : { "new" : 1 }, "exit_status" : 1 },
              "version" : 2
            }

            """)
        let (data, _) = try merged([directory.file("old.json")])
        let text = String(decoding: data, as: UTF8.self)
        XCTAssertFalse(text.contains("shares_keys_with"), text)
        let host = try XCTUnwrap(try RecordedScan.decode(data).hosts.first)
        XCTAssertEqual(host.scannedFrom, "unknown")
        XCTAssertEqual(host.scannedAt, "2026-01-02T03:04:05Z")
        XCTAssertEqual(host.keys.map(\.verdict), [.new])
    }

    func testABadEntryIsRefusedWithItsFileAndIndex() throws {
        let good = try report("good.json", scanner: "eu", [("web1", [TestKeys.a]), ("web2", [TestKeys.b])])
        try directory.write("bad.json", directory.text("good.json").replacingOccurrences(of: #""status":"new","stricter"#,
                                                                                         with: #""status":"fine","stricter"#))
        XCTAssertNotEqual(directory.text("bad.json"), directory.text("good.json"))
        for (file, expected) in [(directory.file("bad.json"), "bad.json: not a fleettrust scan host entry (bad value at .hosts[0].status)"),
                                 (directory.file("missing.json"), "missing.json: cannot be read")] {
            XCTAssertThrowsError(try ReportMerge(files: [good, file]).survey()) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(error)")
            }
        }
        try directory.write("future.json", directory.text("good.json").replacingOccurrences(of: #""version" : 3"#, with: #""version" : 9"#))
        XCTAssertThrowsError(try ReportMerge(files: [directory.file("future.json")]).survey()) { error in
            XCTAssertTrue("\(error)".hasSuffix("future.json: scan document version 9 is not supported (expected 1 to 3)"), "\(error)")
        }
    }

    /// A FIFO nobody writes to would block the open for ever; a report must be a file (merge reads it twice).
    func testAFIFOIsRefusedInsteadOfWaitedOn() throws {
        let fifo = directory.file("report.fifo")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        XCTAssertThrowsError(try ReportMerge(files: [fifo]).survey()) { error in
            XCTAssertTrue("\(error)".contains("report.fifo: is not a regular file"), "\(error)")
        }
    }
}
