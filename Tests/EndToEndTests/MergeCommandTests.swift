import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// `fleettrust merge` over real scans: two scanners, each told about its own loopback fleet and
/// one common host, which is rekeyed between the two scans (what a scanner in a network with an
/// attacker in it sees): the merged document keeps every entry with its scanner, flags the split
/// view, and replays centrally.
final class MergeCommandTests: XCTestCase {
    private func fleettrust(_ arguments: [String]) throws -> ProgramRun {
        try ProgramRun.run(BuiltProducts.fleettrust, arguments, limit: 90)
    }

    func testOneReportGivenTwiceIsRefusedHoweverItIsSpelled() throws {
        let directory = NSTemporaryDirectory() + "merge-twice-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "{}".write(toFile: directory + "/a.json", atomically: true, encoding: .utf8)
        let run = try fleettrust(["merge", directory + "/a.json", directory + "/./a.json"])
        XCTAssertEqual(run.status, 64, run.stderrText)
        XCTAssertTrue(run.stderrText.contains("are the same report"), run.stderrText)
    }

    func testTwoScannersMergeIntoOneDocumentThatFlagsTheSplitViewAndReplays() throws {
        let east = try TestFleet.start(hosts: 2)
        defer { east.stop() }
        let west = try TestFleet.start(hosts: 1)
        defer { west.stop() }
        let directory = east.directory
        let common = east.hosts[1]
        try "\(east.hosts[0].endpoints[0].label)\n\(common.endpoints[0].label)\n".write(toFile: directory + "/east.txt", atomically: true, encoding: .utf8)
        try "\(west.hosts[0].endpoints[0].label)\n\(common.endpoints[0].label)\n".write(toFile: directory + "/west.txt", atomically: true, encoding: .utf8)
        func scan(_ scanner: String) throws -> ProgramRun {
            try fleettrust(["scan", "--inventory", directory + "/\(scanner).txt", "--known-hosts", directory + "/none",
                            "--no-history", "--format", "json", "--scanner-name", "jump-\(scanner)", "--output", directory + "/\(scanner).json"])
        }
        XCTAssertEqual(try scan("east").status, 1, "new hosts")
        try east.rekey(host: 1)
        XCTAssertEqual(try scan("west").status, 1)

        let merged = directory + "/merged.json"
        let merge = try fleettrust(["merge", "--output", merged, directory + "/east.json", directory + "/west.json"])
        XCTAssertEqual(merge.status, 0, merge.stderrText)
        XCTAssertEqual(merge.stderrText, "fleettrust: split view: \(common.endpoints[0].label) port \(common.port): jump-east, jump-west proved different keys\n")
        let document = try RecordedScan.decode(Data(contentsOf: URL(fileURLWithPath: merged)))
        XCTAssertEqual(document.hosts.map(\.name), [east.hosts[0].endpoints[0].label, common.endpoints[0].label, west.hosts[0].endpoints[0].label, common.endpoints[0].label])
        XCTAssertEqual(document.hosts.map(\.scannedFrom), ["jump-east", "jump-east", "jump-west", "jump-west"])
        XCTAssertEqual(document.mergedFrom.map(\.scanner), ["jump-east", "jump-west"])
        XCTAssertEqual(document.mergedFrom.map(\.hosts), [2, 2])
        let before = Set(document.hosts[1].keys.compactMap(\.fingerprint)), after = Set(document.hosts[3].keys.compactMap(\.fingerprint))
        XCTAssertFalse(before.isEmpty)
        XCTAssertTrue(before.isDisjoint(with: after), "the common host presented other keys to the second scanner")
        let text = try String(contentsOfFile: merged, encoding: .utf8)
        XCTAssertTrue(text.contains(#""split_views" : [{"name":"\#(common.endpoints[0].label)","port":\#(common.port),"scanners":["jump-east","jump-west"]}]"#),
                      text)

        let replay = try fleettrust(["scan", "--replay", merged, "--known-hosts", east.knownHostsPath, "--format", "json"])
        let replayed = try RecordedScan.decode(Data(replay.stdout))
        XCTAssertEqual(replayed.hosts.map(\.scannedFrom), document.hosts.map(\.scannedFrom), "replay keeps who proved each key")
        XCTAssertEqual(replayed.summary.exitStatus, replay.status)
        // One rule: the merged summary counts both entries split-view, as replay judges them, and says 2 as replay exits.
        XCTAssertEqual(document.summary.byStatus["split-view"], 2, "\(document.summary)")
        XCTAssertEqual(document.summary.exitStatus, 2)
        XCTAssertEqual(replay.status, 2, replay.stderrText)
        let prometheus = try fleettrust(["scan", "--replay", merged, "--known-hosts", east.knownHostsPath, "--format", "prometheus"])
        XCTAssertTrue(prometheus.stdoutText.contains("name=\"\(common.endpoints[0].label)\",endpoint=\"\(common.endpoints[0].label)\",scanner=\"jump-west\""),
                      prometheus.stdoutText)

        let bad = try fleettrust(["merge", directory + "/east.json", directory + "/missing.json"])
        XCTAssertEqual(bad.status, 64)
        XCTAssertTrue(bad.stderrText.hasPrefix("fleettrust: " + directory + "/missing.json: cannot be read"), bad.stderrText)
        XCTAssertTrue(bad.stdout.isEmpty, "nothing is printed for a merge that failed")
    }
}
