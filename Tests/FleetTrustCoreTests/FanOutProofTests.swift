import Foundation
import XCTest
@testable import FleetTrustCore

/// Fan-out and replay are never quieter than one scanner: a scanner that proved nothing for a
/// host another scanner proved, though the server answered it, is a split view (exit 2) in
/// `merge`'s report and in replay; and a recorded inventory policy may make a host stricter than
/// this machine's policy, never quieter. Recorded documents written by the product's own writer,
/// checked-in keys (Fixtures/Judge/precedence).
final class FanOutProofTests: XCTestCase {
    private var real: HostKey!
    private var impostor: HostKey!
    private var directory: StoreTestDirectory!
    private let web = InventoryHost(name: "web")
    private let kexFailed = ProbeFailure(stage: .keyExchange, code: .kexFailed, message: "key exchange failed: the server closed it")

    override func setUpWithError() throws {
        real = try JudgeFixtures.key("precedence", "ed")
        impostor = try JudgeFixtures.key("precedence", "unrelated")
        directory = try StoreTestDirectory()
    }

    override func tearDown() { directory.remove() }

    private func probe(_ key: HostKey?, from scanner: String, failure: ProbeFailure? = nil) -> ProbeResult {
        var result = ProbeResult(host: "web", port: 22, keys: key.map { [DiscoveredKey(key: $0)] } ?? [],
                                 failures: failure.map { [$0] } ?? [])
        result.scanner = CleanText(scanner)
        result.finishedAt = Date(timeIntervalSince1970: 1_790_000_000)
        return result
    }

    private func judge(_ knownHosts: String = "") -> FleetJudge {
        FleetJudge(knownHosts: KnownHosts(files: [TestKeys.file(knownHosts)]), pins: nil)
    }

    /// A document of these judged probes, as `scan --format json` writes it.
    private func document(_ judged: [JudgedHost]) throws -> Data {
        try ScanReport(generatedAt: Date(timeIntervalSince1970: 1_790_000_000), knownHostsFiles: [], pinFiles: [], judged: judged).encoded()
    }

    private func replayed(_ data: Data, knownHosts: String = "") throws -> [JudgedHost] {
        let pairs = try ScanReplay.load(data, source: "recorded.json")
        let split = SplitViewWitness.find(hosts: pairs.map(\.host), results: pairs.map(\.result))
        return pairs.indices.map { judge(knownHosts).judge(pairs[$0].host, pairs[$0].result, splitView: split[$0] ?? []) }
    }

    func testAScannerTheServerAnsweredWithoutProofIsASplitViewInReplay() throws {
        let data = try document([judge().judge(web, probe(real, from: "dmz")), judge().judge(web, probe(nil, from: "office", failure: kexFailed))])
        let judged = try replayed(data)
        XCTAssertEqual(judged.map(\.status), [.splitView, .splitView])
        XCTAssertEqual(ExitStatusRule.hosts(judged), 2)
        let reason = JudgementWords.reason(judged[0])
        XCTAssertTrue(reason.contains("office proved nothing (key-exchange kex-failed"), reason)
        XCTAssertEqual(judged[1].splitView.first?.fingerprints, [real.sha256Fingerprint])
    }

    func testAScannerThatReachedNothingOrTwoThatProvedNothingAreNoSplitView() throws {
        let refused = ProbeFailure(stage: .connect, code: .connectionRefused, message: "refused")
        let unreachable = try replayed(try document([judge().judge(web, probe(real, from: "dmz")),
                                                     judge().judge(web, probe(nil, from: "office", failure: refused))]))
        XCTAssertEqual(unreachable.map(\.status), [.new, .unreachable])
        let nothing = try replayed(try document([judge().judge(web, probe(nil, from: "dmz", failure: kexFailed)),
                                                 judge().judge(web, probe(nil, from: "office", failure: kexFailed))]))
        XCTAssertEqual(nothing.map(\.status), [.error, .error])
    }

    func testMergeReportsTheScannerThatProvedNothingAsASplitViewWithExitStatusTwo() throws {
        let recorded = "web \(real.openSSHLine)\n"
        let dmz = try document([judge(recorded).judge(web, probe(real, from: "dmz"))])
        let office = try document([judge(recorded).judge(web, probe(nil, from: "office", failure: kexFailed))])
        XCTAssertEqual(try RecordedScan.decode(office).hosts.first?.status, .unverified)
        try directory.write("dmz.json", String(decoding: dmz, as: UTF8.self))
        try directory.write("office.json", String(decoding: office, as: UTF8.self))
        let merge = ReportMerge(files: [directory.file("dmz.json"), directory.file("office.json")])
        let survey = try merge.survey()
        XCTAssertEqual(survey.splitViews, [SplitView(name: "web", port: 22, scanners: ["dmz", "office"])])
        XCTAssertEqual(survey.summary.exitStatus, 2)
        var merged = Data()
        try merge.write(survey) { merged.append($0) }
        XCTAssertEqual(try replayed(merged, knownHosts: recorded).map(\.status), [.splitView, .splitView])
    }

    func testARecordedPolicyMayMakeAHostStricterNeverQuieter() throws {
        let changed = "web \(impostor.openSSHLine)\n"
        for policy in ["off", "pin-only"] {
            var host = web
            host.policy = policy
            let recorded = try document([judge().judge(host, probe(real, from: "dmz"))])
            XCTAssertEqual(try RecordedScan.decode(recorded).hosts.first?.policySource, "inventory")
            let judged = try replayed(recorded, knownHosts: changed)
            XCTAssertEqual(judged.map(\.status), [.changed], "a document saying \(policy) does not quieten this machine's changed")
            XCTAssertEqual(judged.first?.policy, .builtIn(.standard))
        }
        var pinned = web
        pinned.policy = "pinned"
        let stricter = try replayed(try document([judge().judge(pinned, probe(real, from: "dmz"))]), knownHosts: "web \(real.openSSHLine)\n")
        XCTAssertEqual(stricter.map(\.status), [.unpinned], "a stricter recorded policy still applies")
    }
}
