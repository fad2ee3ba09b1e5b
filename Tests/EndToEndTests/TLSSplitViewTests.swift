import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// One TLS endpoint seen by three scanners in turn on one loopback port: a real `sshd` (a
/// network where something answers but no TLS upgrade happens), then real `openssl s_server`s
/// with two CA-valid leaves of different keys. Merged, any two different views are a split view
/// (summary 2, replay 2), as for SSH hosts; two scanners that met the same leaf agree.
final class TLSSplitViewTests: XCTestCase {
    private var lab: TLSTestLab!

    override func setUpWithError() throws {
        lab = try TLSTestLab()
    }

    override func tearDown() {
        lab?.stop()
    }

    private func fleettrust(_ arguments: [String]) throws -> ProgramRun {
        try ProgramRun.run(BuiltProducts.fleettrust, arguments, limit: 60)
    }

    private func scan(_ scanner: String) throws -> RecordedScan.Host {
        let run = try fleettrust(["scan", "--inventory", lab.path("inventory"), "--known-hosts", "/dev/null", "--no-history",
                                  "--tls-ca-file", lab.path("root.pem"), "--timeout", "3", "--format", "json",
                                  "--scanner-name", scanner, "--output", lab.path(scanner + ".json")])
        let report = try RecordedScan.decode(Data(contentsOf: URL(fileURLWithPath: lab.path(scanner + ".json"))))
        XCTAssertEqual(report.hosts.count, 1, run.stderrText)
        return try XCTUnwrap(report.hosts.first)
    }

    /// Merges the scanners' reports, checks the summary says what replay then judges and exits.
    private func merged(_ scanners: [String]) throws -> (summary: RecordedScan, replay: RecordedScan, replayStatus: Int32, text: String) {
        let output = lab.path(scanners.joined(separator: "+") + ".json")
        let merge = try fleettrust(["merge", "--output", output] + scanners.map { lab.path($0 + ".json") })
        XCTAssertEqual(merge.status, 0, merge.stderrText)
        let document = try RecordedScan.decode(Data(contentsOf: URL(fileURLWithPath: output)))
        let replay = try fleettrust(["scan", "--replay", output, "--known-hosts", "/dev/null", "--tls-ca-file", lab.path("root.pem"),
                                     "--format", "json"])
        let replayed = try XCTUnwrap(try? RecordedScan.decode(Data(replay.stdout)), replay.stderrText)
        XCTAssertEqual(document.summary.exitStatus, replay.status, "the merged summary says what replay exits")
        return (document, replayed, replay.status, try String(contentsOfFile: output, encoding: .utf8))
    }

    func testAnotherLeafKeyOrAFailedUpgradeSeenByAnotherScannerIsASplitView() throws {
        try lab.rootCA(subject: "fleettrust test root", signing: [("leaf", "leaf", "localhost"), ("other", "other", "localhost")])
        let sshd = try LoopbackSSHD()
        defer { sshd.stop() }
        let port = sshd.port
        try lab.write("inventory", "tls://localhost:\(port)\n")

        let stripped = try scan("stripped")
        XCTAssertEqual(stripped.error?.code, .notTLS, "the server answered, in SSH")
        sshd.stop()
        try lab.serve(certificate: "leaf", key: "leaf", port: port)
        XCTAssertEqual(try scan("eu").status, .trusted)
        lab.stopServing(port: port)
        try lab.serve(certificate: "other", key: "other", port: port)
        XCTAssertEqual(try scan("us").status, .trusted, "both leaves are CA-valid: only the comparison shows it")
        lab.stopServing(port: port)
        try lab.serve(certificate: "leaf", key: "leaf", port: port)
        XCTAssertEqual(try scan("eu-again").status, .trusted)
        lab.stopServing(port: port)

        let agreeing = try merged(["eu", "eu-again"])
        XCTAssertEqual(agreeing.summary.summary.exitStatus, 0, "the same leaf key from two scanners is no split view")
        XCTAssertEqual(agreeing.replay.hosts.map(\.status), [.trusted, .trusted])
        XCTAssertTrue(agreeing.text.contains(#""split_views" : []"#), agreeing.text)

        let otherKey = try merged(["eu", "us"])
        XCTAssertEqual(otherKey.summary.summary.byStatus["split-view"], 2, "\(otherKey.summary.summary)")
        XCTAssertEqual(otherKey.replayStatus, 2)
        XCTAssertEqual(otherKey.replay.hosts.map(\.status), [.splitView, .splitView])
        XCTAssertTrue(otherKey.text.contains(#""scanners":["eu","us"]"#), otherKey.text)
        let usPin = "pin-sha256:" + (try lab.spkiPin("other")), euPin = "pin-sha256:" + (try lab.spkiPin("leaf"))
        XCTAssertTrue(otherKey.replay.hosts[0].reason.contains("us proved \(usPin)"), otherKey.replay.hosts[0].reason)
        XCTAssertTrue(otherKey.replay.hosts[0].reason.contains("this probe by eu proved \(euPin)"), otherKey.replay.hosts[0].reason)

        let strippedView = try merged(["eu", "stripped"])
        XCTAssertEqual(strippedView.summary.summary.byStatus["split-view"], 2, "\(strippedView.summary.summary)")
        XCTAssertEqual(strippedView.replayStatus, 2)
        XCTAssertEqual(strippedView.replay.hosts.map(\.status), [.splitView, .splitView])
        XCTAssertTrue(strippedView.replay.hosts[0].reason.contains("stripped proved nothing (tls-handshake not-tls"),
                      strippedView.replay.hosts[0].reason)
    }
}
