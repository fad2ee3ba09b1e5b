import Foundation
import XCTest
@testable import FleetTrustCore

/// What the commands decide, now in Core: which inventory hosts are selected, which known_hosts
/// files are read by default, which tidy findings a selection picks.
final class CommandLogicTests: XCTestCase {
    func testGroupSelectionKeepsInventoryOrderChildrenIncludedAndEachHostOnce() {
        let hosts = [InventoryHost(name: "a", groups: ["web"]), InventoryHost(name: "b", groups: ["db"]),
                     InventoryHost(name: "c", groups: ["edge"], inheritedGroups: ["web"]), InventoryHost(name: "d")]
        let inventory = Inventory(hosts: hosts)
        XCTAssertEqual(InventorySelection(files: [], groups: ["db", "web"]).select(inventory).map(\.name), ["a", "b", "c"])
        XCTAssertEqual(InventorySelection(files: [], groups: ["ungrouped"]).select(inventory).map(\.name), ["d"])
        XCTAssertEqual(InventorySelection(files: []).select(inventory).map(\.name), ["a", "b", "c", "d"])
        XCTAssertEqual(InventorySelection(files: ["i"], groups: ["x", "y"]).nothingSelected, "no hosts to check in i (groups: x, y)")
    }

    func testLoadingSelectsGroupsDropsRoutesWithDirectAndCountsTheSkippedOverTheWholeFile() throws {
        let dir = try StoreTestDirectory()
        defer { dir.remove() }
        try dir.write("hosts.ini", "[web]\nw1 ansible_ssh_common_args='-o ProxyJump=bastion'\nw2\n[db]\nd1\nbad ansible_port=notaport\n")
        let loaded = try InventorySelection(files: [dir.file("hosts.ini")], groups: ["web"], direct: true).load(options: InventoryReadOptions())
        XCTAssertEqual(loaded.inventory.hosts.map(\.name), ["w1", "w2"])
        XCTAssertEqual(loaded.inventory.hosts.map(\.routing), [.success(.direct), .success(.direct)])
        XCTAssertEqual(loaded.skipped, "skipped 1 inventory entry with errors; going on with 3 hosts")
        let routed = try InventorySelection(files: [dir.file("hosts.ini")], groups: ["web"]).load(options: InventoryReadOptions())
        XCTAssertEqual(routed.inventory.hosts.first?.route.proxyDirective, "ProxyJump bastion")
    }

    func testTheDefaultKnownHostsFilesAreTheFourSshReadsAndAGivenListReplacesThemAll() {
        let defaults = DefaultKnownHostsFiles.chosen(given: [], home: "/home/op")
        XCTAssertEqual(defaults.user, ["/home/op/.ssh/known_hosts", "/home/op/.ssh/known_hosts2"])
        XCTAssertEqual(defaults.global, ["/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"])
        let given = DefaultKnownHostsFiles.chosen(given: ["/tmp/kh"], home: "/home/op")
        XCTAssertEqual(given.user, ["/tmp/kh"])
        XCTAssertEqual(given.global, [])
    }

    private func findings(_ text: String, path: String) -> (file: KnownHostsFile, findings: [TidyFinding]) {
        let file = KnownHostsFile(path: path, bytes: Array(text.utf8))
        return (file, KnownHostsHygiene(files: [file], inventory: nil, presentedKeyTypes: [:]).findings())
    }

    func testTidySelectsByKindAndLineAndNamesEveryLineItCannotSelect() throws {
        let dir = try StoreTestDirectory()
        defer { dir.remove() }
        let path = dir.file("kh")
        let text = "web \(TestKeys.a.openSSHLine)\nweb \(TestKeys.a.openSSHLine)\n@revoked * \(TestKeys.b.openSSHLine)\ndb \(TestKeys.b.openSSHLine)\n"
        try dir.write("kh", text)
        let (file, all) = findings(text, path: path)
        XCTAssertEqual(TidySelection.location("/a:b/kh:12")?.path, "/a:b/kh")
        XCTAssertEqual(TidySelection.location("/a:b/kh:12")?.line, 12)
        XCTAssertNil(TidySelection.location("kh:0"))
        XCTAssertNil(TidySelection.location("kh"))
        let byKind = TidySelection(kinds: [.duplicate]).choose(from: all, files: [file])
        XCTAssertEqual(byKind.chosen.map(\.location.line), [2])
        XCTAssertEqual(byKind.notes, [])
        let byLine = TidySelection(lines: [(path, 2), (path, 3), (path, 1), (dir.file("other"), 1)]).choose(from: all, files: [file])
        XCTAssertEqual(byLine.chosen.map(\.location.line), [2])
        XCTAssertEqual(byLine.notes.count, 3, "\(byLine.notes)")
        XCTAssertTrue(byLine.notes.contains { $0.hasSuffix(":1: not removed: no finding on that line") }, "\(byLine.notes)")
        XCTAssertTrue(byLine.notes.contains { $0.contains("that file is not among those read") }, "\(byLine.notes)")
    }

    func testATypedAnswerPicksNumbersRangesKindsOrAll() {
        let text = (1...5).map { "h\($0) \(TestKeys.a.openSSHLine)\nh\($0) \(TestKeys.a.openSSHLine)\n" }.joined()
        let removable = findings(text, path: "kh").findings.filter(\.removable)
        XCTAssertEqual(removable.count, 5)
        XCTAssertEqual(TidySelection.answer("1 3-4", from: removable).map(\.location.line), [2, 6, 8])
        XCTAssertEqual(TidySelection.answer("4-99,1", from: removable).map(\.location.line), [2, 8, 10])
        XCTAssertEqual(TidySelection.answer("all", from: removable).count, 5)
        XCTAssertEqual(TidySelection.answer("duplicate", from: removable).count, 5)
        XCTAssertEqual(TidySelection.answer("0 6 x 3-1", from: removable).count, 0)
    }

    func testTidyRemovalIsOneEditPerFileAndOneAuditEventPerFinding() {
        let text = "h \(TestKeys.a.openSSHLine)\nh \(TestKeys.a.openSSHLine)\n"
        let (first, found) = findings(text, path: "one")
        let second = KnownHostsFile(path: "two", bytes: [])
        let edits = TidyFix.edits(removing: found, files: [second, first])
        XCTAssertEqual(edits.count, 1)
        XCTAssertEqual(edits[0].edit.path, "one")
        guard case .removeLines(let lines, _) = edits[0].edit.change else { return XCTFail("\(edits[0].edit.change)") }
        XCTAssertEqual(lines, [2])
        let event = found[0].auditEvent(user: "u", time: Date(timeIntervalSince1970: 0), outcome: .written).record
        XCTAssertEqual(event.oldEntries, ["one:2: \(text.split(separator: "\n")[1])"])
        XCTAssertEqual(event.method, "tidy --fix duplicate -> " + FileManager.default.currentDirectoryPath + "/one", "the audit log names files absolutely")
    }

    func testTheDashboardWatchesEveryFileTheJudgementReads() {
        let own = InventoryHost(name: "own", userKnownHostsFiles: ["/srv/own_known_hosts"],
                                sshOptions: SSHHostOptions(revokedHostKeys: ["/etc/ssh/revoked.krl"]))
        let files = TrustFiles(userKnownHosts: ["/u/kh"], globalKnownHosts: ["/g/kh"], pinFile: "/p/pins")
        XCTAssertEqual(files.watchedPaths(for: [own, InventoryHost(name: "plain")]),
                       ["/u/kh", "/g/kh", "/srv/own_known_hosts", "/p/pins", "/etc/ssh/revoked.krl"])
    }

    func testAPinFileWithABadLineMakesTheFilesUnreadableNamingTheLine() throws {
        let dir = try StoreTestDirectory()
        defer { dir.remove() }
        try dir.write("pins", "web SHA256:nonsense\n")
        XCTAssertThrowsError(try TrustFiles(userKnownHosts: [dir.file("kh")], globalKnownHosts: [], pinFile: dir.file("pins"))
            .judge(for: [InventoryHost(name: "web")])) { error in
            XCTAssertTrue("\(error)".contains(dir.file("pins") + ":1"), "\(error)")
        }
    }
}
