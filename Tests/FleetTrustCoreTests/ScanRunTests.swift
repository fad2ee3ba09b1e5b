import XCTest
@testable import FleetTrustCore

/// The one scan run: judges, records and decides the outcome before any sink finishes, so every
/// format says the exit status the process exits with; each format is one sink.
final class ScanRunTests: XCTestCase {
    /// Records what the run told it, in order.
    private final class Log: @unchecked Sendable {
        var events: [String] = []
        var outcome: ScanOutcome?
    }

    private struct LoggingSink: ScanSink {
        let log: Log
        mutating func begin(_ run: ScanRunFacts) throws { log.events.append("begin \(run.sharedKeys.entries.count) shared") }
        mutating func host(_ judged: JudgedHost) throws { log.events.append("host \(judged.labels.name.value)") }
        mutating func finish(_ outcome: ScanOutcome) async throws {
            log.events.append("finish \(outcome.exitStatus)")
            log.outcome = outcome
        }
    }

    private let knownHosts = TestKeys.file("trusted.example \(TestKeys.a.openSSHLine)\n")

    /// trusted.example (trusted), clone (new, sharing trusted's key), down (unreachable).
    private func run(hosts names: [String] = ["trusted.example", "clone", "down"], skipped: [SkippedInventoryEntry] = [],
                     record: (([HistorySighting]) async -> String?)?) -> ScanRun {
        let judge = FleetJudge(knownHosts: KnownHosts(files: [knownHosts]), pins: nil)
        let hosts = names.map { InventoryHost(name: $0) }
        let results = hosts.map { host in
            host.name == "down"
                ? ProbeResult(host: host.name, port: 22, failures: [ProbeFailure(stage: .connect, code: .connectionRefused, message: "refused")])
                : ProbeResult(host: host.name, port: 22, keys: [DiscoveredKey(key: TestKeys.a)])
        }
        let shared = SharedKeyTable(names: names, results: results)
        return ScanRun(count: hosts.count, judged: { judge.judge(hosts[$0], results[$0], keySharing: shared.sharing(results[$0])) },
                       skipped: skipped, record: record,
                       facts: ScanRunFacts(generatedAt: Date(timeIntervalSince1970: 1_790_000_000), knownHostsFiles: ["kh"],
                                           pinFiles: [], sharedKeys: shared))
    }

    func testAFailedHistoryRecordRaisesTheExitStatusBeforeTheSinkFinishes() async throws {
        let log = Log()
        var sink: any ScanSink = LoggingSink(log: log)
        var recorded: [HistorySighting] = []
        let outcome = try await run(hosts: ["trusted.example"], record: { sightings in
            recorded = sightings
            log.events.append("record \(sightings.count)")
            return "disk full"
        }).run(into: &sink)
        XCTAssertEqual(log.events, ["begin 0 shared", "host trusted.example", "record 1", "finish 1"])
        XCTAssertEqual(outcome.exitStatus, 1, "all trusted, but the history could not record the scan")
        XCTAssertEqual(outcome.recordProblem, "disk full")
        XCTAssertEqual(log.outcome, outcome, "the sink finishes with the final outcome")
        XCTAssertEqual(recorded.count, 1)
    }

    func testTheJSONSummarySaysTheProcessExitStatus() async throws {
        var out = Data()
        var sink = ScanFormat.json.sink(ScanFormat.Context(write: { out.append($0) }))
        let outcome = try await run(hosts: ["trusted.example"], record: { _ in "locked" }).run(into: &sink)
        let document = try RecordedScan.decode(out)
        XCTAssertEqual(document.hosts.map(\.status), [.trusted])
        XCTAssertEqual(document.summary.exitStatus, outcome.exitStatus)
        XCTAssertEqual(document.summary.exitStatus, 1)
    }

    func testCountsSkippedEntriesAndTheLoudestHostMakeTheOutcome() async throws {
        let skipped = [SkippedInventoryEntry(file: "hosts.ini", line: 3, reason: "bad port")]
        var sink: any ScanSink = LoggingSink(log: Log())
        let outcome = try await run(skipped: skipped, record: nil).run(into: &sink)
        XCTAssertEqual(outcome.summary.total, 3)
        XCTAssertEqual(outcome.summary.byStatus, ["trusted": 1, "new": 1, "unreachable": 1])
        XCTAssertEqual(outcome.skipped, skipped)
        XCTAssertEqual(outcome.exitStatus, 1)
        XCTAssertNil(outcome.recordProblem)
        var quiet: any ScanSink = LoggingSink(log: Log())
        let trusted = try await run(hosts: ["trusted.example"], skipped: skipped, record: nil).run(into: &quiet)
        XCTAssertEqual(trusted.exitStatus, 1, "a skipped entry raises an all-trusted scan to 1")
    }

    func testEachFormatIsOneSinkRenderingTheSameHostsAndOutcome() async throws {
        func output(_ format: ScanFormat) async throws -> (String, ScanOutcome) {
            var out = Data()
            var sink = format.sink(ScanFormat.Context(write: { out.append($0) }, trustOnFirstUse: true))
            let outcome = try await run(skipped: [SkippedInventoryEntry(file: "h", line: 1, reason: "bad")], record: { _ in nil })
                .run(into: &sink)
            return (String(decoding: out, as: UTF8.self), outcome)
        }
        let (table, outcome) = try await output(.table)
        XCTAssertTrue(table.contains("key shared by 2 hosts"), table)
        XCTAssertTrue(table.contains("3 hosts: 1 trusted, 1 new, 1 unreachable"), table)
        XCTAssertTrue(table.contains("Skipped inventory entries (not checked; exit status at least 1):\n  h:1: bad"), table)
        let (lines, _) = try await output(.knownHosts)
        XCTAssertEqual(lines, "# clone (clone:22): proved by trust on first use\nclone \(TestKeys.a.openSSHLine)\n",
                       "only the new host's key, under its name, after a comment naming it")
        let (metrics, _) = try await output(.prometheus)
        XCTAssertTrue(metrics.contains("fleettrust_scan_exit_status \(outcome.exitStatus)\n"), metrics)
        XCTAssertTrue(metrics.contains("fleettrust_inventory_skipped_entries 1\n"), metrics)
        let (json, _) = try await output(.json)
        let document = try RecordedScan.decode(Data(json.utf8))
        XCTAssertEqual(document.sharedKeys.map(\.hosts), [["clone", "trusted.example"]])
        XCTAssertEqual(document.summary.exitStatus, outcome.exitStatus)
    }

    func testAStoppedRunRecordsOnlyTheHostsThatProvedKeys() async {
        var recorded: [String] = []
        let (proved, problem) = await run(record: { sightings in
            recorded = sightings.map(\.host)
            return nil
        }).recordProved()
        XCTAssertEqual(proved, 2)
        XCTAssertEqual(recorded, ["trusted.example", "clone"])
        XCTAssertNil(problem)
        let unrecorded = await run(record: nil).recordProved()
        XCTAssertEqual(unrecorded.proved, 2)
        XCTAssertNil(unrecorded.problem)
    }
}
