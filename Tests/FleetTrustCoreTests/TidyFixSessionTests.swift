import Foundation
import XCTest
@testable import FleetTrustCore

/// `tidy --fix`'s conversation, without a terminal: what it shows, what an answer selects, what
/// is written and logged, and what a refused write ends as.
final class TidyFixSessionTests: XCTestCase {
    private var dir: StoreTestDirectory!
    private var said = ""
    private var answers: [String] = []
    private var complaints: [String] = []

    override func setUpWithError() throws { dir = try StoreTestDirectory() }
    override func tearDown() { dir.remove() }

    private func session(_ selection: TidySelection = TidySelection(), confirmed: Bool = false) -> TidyFixSession {
        TidyFixSession(selection: selection, confirmed: confirmed, editor: TrustStoreEditor(hashNames: false),
                       log: AuditLog(path: dir.file("audit.jsonl")), user: "alice",
                       say: { [unowned self] text, end in said += text + end },
                       ask: { [unowned self] in answers.isEmpty ? nil : answers.removeFirst() },
                       complain: { [unowned self] in complaints.append($0) })
    }

    private func read() throws -> (files: [KnownHostsFile], findings: [TidyFinding]) {
        let file = try KnownHostsFile.read(path: dir.file("kh"))
        return ([file], KnownHostsHygiene(files: [file], inventory: nil, presentedKeyTypes: [:]).findings())
    }

    private let text = "web \(TestKeys.a.openSSHLine)\nweb \(TestKeys.a.openSSHLine)\n# end\n"

    func testAnAnsweredAndConfirmedChoiceIsRemovedAndLoggedWithTheLine() throws {
        try dir.write("kh", text)
        let (files, findings) = try read()
        answers = ["1", "y"]
        let fix = session()
        XCTAssertEqual(fix.remove(fix.selected(findings, files: files), of: findings, files: files), .removed)
        XCTAssertEqual(dir.text("kh"), "web \(TestKeys.a.openSSHLine)\n# end\n")
        XCTAssertTrue(said.contains("1. \(dir.file("kh")):2  duplicate"), said)
        XCTAssertTrue(said.contains("This line will be removed:\n  \(dir.file("kh")):2: web ssh-ed25519"), said)
        let record = try JSONDecoder().decode(AuditLog.Record.self, from: Data(dir.text("audit.jsonl").utf8))
        XCTAssertEqual([record.action, record.outcome, record.user], ["tidy", "removed", "alice"])
        XCTAssertEqual(record.oldEntries, ["\(dir.file("kh")):2: web \(TestKeys.a.openSSHLine)"])
    }

    func testDecliningTheConfirmationWritesAndLogsNothing() throws {
        try dir.write("kh", text)
        let (files, findings) = try read()
        answers = ["all", "n"]
        let fix = session()
        XCTAssertEqual(fix.remove(fix.selected(findings, files: files), of: findings, files: files), .nothingRemoved)
        XCTAssertEqual(dir.text("kh"), text)
        XCTAssertTrue(said.hasSuffix("Remove them? [y/N] nothing removed\n"), said)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file("audit.jsonl")))
    }

    func testAFileChangedSinceItWasReadIsAFailureLoggedAsNotRemoved() throws {
        try dir.write("kh", text)
        let (files, findings) = try read()
        try dir.write("kh", "# edited by hand\n" + text)
        let fix = session(TidySelection(kinds: [.duplicate]), confirmed: true)
        XCTAssertEqual(fix.remove(fix.selected(findings, files: files), of: findings, files: files), .failed)
        XCTAssertEqual(dir.text("kh"), "# edited by hand\n" + text)
        XCTAssertEqual(complaints.count, 1, "\(complaints)")
        let record = try JSONDecoder().decode(AuditLog.Record.self, from: Data(dir.text("audit.jsonl").utf8))
        XCTAssertTrue(record.outcome.hasPrefix("not removed: "), record.outcome)
    }

    func testALineAppendedSinceTheFileWasReadIsKeptAfterTheFix() throws {
        try dir.write("kh", text)
        let (files, findings) = try read()
        try dir.write("kh", text + "appended \(TestKeys.b.openSSHLine)\n")
        let fix = session(TidySelection(kinds: [.duplicate]), confirmed: true)
        XCTAssertEqual(fix.remove(fix.selected(findings, files: files), of: findings, files: files), .removed)
        XCTAssertEqual(dir.text("kh"), "web \(TestKeys.a.openSSHLine)\n# end\nappended \(TestKeys.b.openSSHLine)\n")
    }

    func testANamesLastLineIsKeptAndSaidSo() throws {
        try dir.write("kh", "web \(TestKeys.a.openSSHLine)\nweb \(TestKeys.b.openSSHLine)\n")
        let (files, findings) = try read()
        let fix = session(TidySelection(lines: [(dir.file("kh"), 1), (dir.file("kh"), 2)]), confirmed: true)
        XCTAssertEqual(fix.remove(fix.selected(findings, files: files), of: findings, files: files), .nothingRemoved)
        XCTAssertTrue(said.contains("kept \(dir.file("kh")):1: the last line recording its name"), said)
        XCTAssertTrue(said.contains("kept \(dir.file("kh")):2: removing it would change what ssh decides for web presenting"), said)
        XCTAssertEqual(dir.text("kh"), "web \(TestKeys.a.openSSHLine)\nweb \(TestKeys.b.openSSHLine)\n")
    }

    func testTheLineHoldingTheKeyTheHostPresentedIsTheOneKept() throws {
        try dir.write("kh", "web \(TestKeys.b.openSSHLine)\nweb \(TestKeys.a.openSSHLine)\n")
        let (files, findings) = try read()
        var fix = session(TidySelection(lines: [(dir.file("kh"), 1), (dir.file("kh"), 2)]), confirmed: true)
        fix.decisionGuard = TidyDecisionGuard(files: files, hosts: [InventoryHost(name: "web", address: "web")],
                                              presented: ["web": [TestKeys.a.sha256Fingerprint]])
        XCTAssertEqual(fix.remove(fix.selected(findings, files: files), of: findings, files: files), .removed)
        XCTAssertEqual(dir.text("kh"), "web \(TestKeys.a.openSSHLine)\n")
    }
}
