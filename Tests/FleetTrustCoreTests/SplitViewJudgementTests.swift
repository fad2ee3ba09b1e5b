import Foundation
import XCTest
@testable import FleetTrustCore

/// Two scanners that proved different keys for one host (same name, same port) are an alarm,
/// `split-view`, on both entries, naming the other scanner and what it proved; agreeing
/// scanners, one scanner twice, another port or a scanner that proved nothing are not. Real keys
/// (checked in), the one judge.
final class SplitViewJudgementTests: XCTestCase {
    private let keys = ["real": TestKeys.a, "impostor": TestKeys.b, "pinned": TestKeys.c]

    private func probe(_ key: String?, from scanner: String?, port: Int = 22) -> ProbeResult {
        var result = ProbeResult(host: "web", port: port, keys: key.map { [DiscoveredKey(key: keys[$0]!)] } ?? [],
                                 failures: key == nil ? [ProbeFailure(stage: .connect, code: .connectionRefused, message: "refused")] : [])
        result.scanner = scanner.map { CleanText($0) }
        result.finishedAt = scanner == nil ? nil : HistoryTime.date(rfc3339: "2026-11-25T17:00:00Z")
        return result
    }

    private func judged(_ entries: [(host: InventoryHost, result: ProbeResult)], knownHosts: String = "",
                        pins: String? = nil) throws -> [JudgedHost] {
        let hosts = entries.map(\.host), results = entries.map(\.result)
        let split = SplitViewWitness.find(hosts: hosts, results: results)
        let pinSet = try pins.map { try PinSet.parse(path: "pins", bytes: Array($0.utf8)) }
        let judge = FleetJudge(knownHosts: KnownHosts(files: [TestKeys.file(knownHosts)]), pins: pinSet)
        return hosts.indices.map { judge.judge(hosts[$0], results[$0], splitView: split[$0] ?? []) }
    }

    private let web = InventoryHost(name: "web")

    func testTwoScannersProvingDifferentKeysAreBothSplitViewNamingTheOther() throws {
        let result = try judged([(web, probe("real", from: "dmz-jump")), (web, probe("impostor", from: "office-jump"))])
        XCTAssertEqual(result.map(\.status), [.splitView, .splitView])
        XCTAssertEqual(result[0].splitView.map(\.scanner.value), ["office-jump"])
        XCTAssertEqual(result[0].splitView.first?.fingerprints, [keys["impostor"]!.sha256Fingerprint])
        XCTAssertEqual(result[1].splitView.map(\.scanner.value), ["dmz-jump"])
        XCTAssertEqual(result[1].splitView.first?.fingerprints, [keys["real"]!.sha256Fingerprint])
        XCTAssertEqual(HostStatus.splitView.alarmLevel, 2)
        XCTAssertEqual(ExitStatusRule.hosts(result), 2)
        XCTAssertEqual(result[1].saving, .refused(.splitView), "neither view may be saved while the scanners disagree")
        let reason = JudgementWords.reason(result[1])
        XCTAssertTrue(reason.contains("dmz-jump proved \(keys["real"]!.sha256Fingerprint)"), reason)
        XCTAssertTrue(reason.contains("by office-jump proved \(keys["impostor"]!.sha256Fingerprint)"), reason)
    }

    func testAgreeingScannersAnotherPortOrNoKeysAreNoSplitViewButOneScanWithTwoKeysIs() throws {
        let agreeing = try judged([(web, probe("real", from: "a")), (web, probe("real", from: "b"))])
        XCTAssertEqual(agreeing.map(\.status), [.new, .new])
        XCTAssertEqual(agreeing.flatMap(\.splitView), [])
        let sameScanner = try judged([(web, probe("real", from: "a")), (web, probe("impostor", from: "a"))])
        XCTAssertEqual(sameScanner.map(\.status), [.splitView, .splitView], "one scan, one known_hosts name, two keys of one type")
        XCTAssertEqual(sameScanner.flatMap(\.splitView).map(\.row), [CleanText("web"), CleanText("web")])
        var other = web
        other.port = 2222
        let otherPort = try judged([(web, probe("real", from: "a")), (other, probe("impostor", from: "b", port: 2222))])
        XCTAssertEqual(otherPort.map(\.status), [.new, .new])
        let unreachable = try judged([(web, probe("real", from: "a")), (web, probe(nil, from: "b"))])
        XCTAssertEqual(unreachable.map(\.status), [.new, .unreachable])
        let live = try judged([(web, probe("real", from: nil)), (web, probe("impostor", from: nil))])
        XCTAssertEqual(live.map(\.status), [.splitView, .splitView], "a live scan's rows under one known_hosts name are compared too")
        let liveAgreeing = try judged([(web, probe("real", from: nil)), (web, probe("real", from: nil))])
        XCTAssertEqual(liveAgreeing.map(\.status), [.new, .new])
    }

    func testSplitViewRanksJustBelowChangedAndAbovePinMismatch() throws {
        let changed = try judged([(web, probe("impostor", from: "a")), (web, probe("real", from: "b"))],
                                 knownHosts: "web \(keys["real"]!.openSSHLine)\n")
        XCTAssertEqual(changed.map(\.status), [.changed, .splitView], "changed is louder; the other view is still split")
        XCTAssertEqual(changed[0].splitView.map(\.scanner.value), ["b"], "the fact stays on the host under a louder status")
        XCTAssertEqual(changed[0].saving, .refused(.splitView), "no replace while another network sees the recorded key")
        let revoked = try judged([(web, probe("impostor", from: "a")), (web, probe("real", from: "b"))],
                                 knownHosts: "@revoked * \(keys["impostor"]!.openSSHLine)\n")
        XCTAssertEqual(revoked.map(\.status), [.revoked, .splitView])
        let pinned = try judged([(web, probe("impostor", from: "a")), (web, probe("real", from: "b"))],
                                pins: "web \(keys["pinned"]!.sha256Fingerprint)\n")
        XCTAssertEqual(pinned.map(\.status), [.splitView, .splitView])
    }

    func testAWrittenAndReplayedDocumentKeepsEachEntrysScannerAndFindsTheSplit() throws {
        let judge = FleetJudge(knownHosts: KnownHosts(files: [TestKeys.file("")]), pins: nil)
        var data = Data()
        var writer = ScanDocumentWriter(knownHostsFiles: [], pinFiles: [], sharedKeys: SharedKeyTable(), sink: { data.append($0) })
        try writer.append(judge.judge(web, probe("real", from: "dmz-jump")))
        try writer.append(judge.judge(web, probe("impostor", from: "office-jump")))
        try writer.finish(skipped: [], exitStatus: 1)
        let pairs = try ScanReplay.load(data, source: "merged.json")
        XCTAssertEqual(pairs.map { $0.result.scanner?.value }, ["dmz-jump", "office-jump"])
        XCTAssertEqual(pairs[0].result.finishedAt.map(HistoryTime.rfc3339(date:)), "2026-11-25T17:00:00Z")
        let split = SplitViewWitness.find(hosts: pairs.map(\.host), results: pairs.map(\.result))
        XCTAssertEqual(split[0]?.map(\.scanner.value), ["office-jump"])
        XCTAssertEqual(split[1]?.map(\.scanner.value), ["dmz-jump"])
        XCTAssertEqual(split[1]?.first?.scannedAt.map(HistoryTime.rfc3339(date:)), "2026-11-25T17:00:00Z")
        let rejudged = pairs.indices.map { judge.judge(pairs[$0].host, pairs[$0].result, splitView: split[$0] ?? []) }
        XCTAssertEqual(rejudged.map(\.status), [.splitView, .splitView])
    }
}

/// A scanner cannot step out of a split view by spelling the host otherwise: entries that `ssh`
/// looks up under one name (the case of a name, another inventory alias of the same address)
/// are one host to compare.
final class SplitViewSpellingTests: XCTestCase {
    func testAnotherSpellingOfTheSameLookupNameIsStillASplitView() throws {
        let keys = [TestKeys.a, TestKeys.b]
        func probe(_ key: HostKey, from scanner: String) -> ProbeResult {
            var result = ProbeResult(host: "web.example.com", port: 22, keys: [DiscoveredKey(key: key)])
            result.scanner = CleanText(scanner)
            return result
        }
        let honest = InventoryHost(name: "web.example.com")
        for spelling in [InventoryHost(name: "WEB.example.com"), InventoryHost(name: "web-alias", address: "web.example.com"),
                         InventoryHost(name: "web", address: "10.1.2.3", hostKeyAlias: "Web.Example.Com")] {
            let found = SplitViewWitness.find(hosts: [honest, spelling], results: [probe(keys[0], from: "dmz"), probe(keys[1], from: "office")])
            XCTAssertEqual(found[0]?.map(\.scanner.value), ["office"], spelling.name)
            XCTAssertEqual(found[1]?.map(\.scanner.value), ["dmz"], spelling.name)
            XCTAssertEqual(found[1]?.first?.fingerprints, [keys[0].sha256Fingerprint])
        }
    }
}
