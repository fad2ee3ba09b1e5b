import XCTest
@testable import FleetTrustCore

final class KnownHostsHygieneTests: XCTestCase {
    private func findings(_ text: String, presented: [String: Set<String>] = [:]) -> [(Int, TidyFindingKind)] {
        KnownHostsHygiene(files: [TestKeys.file(text)], presentedKeyTypes: presented).findings().map { ($0.location.line, $0.kind) }
    }

    func testHashedAndPlainLineForOneNameAndKeyIsADuplicate() throws {
        let hashed = try HashedHostName(hashing: "web").field
        let result = findings("web \(TestKeys.a.openSSHLine)\n\(hashed) \(TestKeys.a.openSSHLine)\n")
        XCTAssertTrue(result.contains { $0 == (2, .duplicate) })
        XCTAssertFalse(result.contains { $0.0 == 1 && $0.1 == .duplicate })
    }

    func testBadSaltAndNegatedOnlyLinesAreUnmatchable() {
        let result = findings("|1|bad|salt \(TestKeys.a.openSSHLine)\n!web \(TestKeys.a.openSSHLine)\n")
        XCTAssertTrue(result.contains { $0 == (1, .unmatchable) })
        XCTAssertTrue(result.contains { $0 == (2, .unmatchable) })
    }

    func testKeyTypeTheHostNoLongerPresentsIsUnused() {
        let result = findings("web \(TestKeys.a.openSSHLine)\n", presented: ["web": ["ecdsa-sha2-nistp256"]])
        XCTAssertTrue(result.contains { $0 == (1, .unusedKeyType) })
        XCTAssertFalse(findings("web \(TestKeys.a.openSSHLine)\n", presented: ["web": [TestKeys.a.type]]).contains { $0.1 == .unusedKeyType })
    }

    func testFixRemovesOnlyTheChosenLinesAndKeepsEveryOtherByte() throws {
        let text = "# c\r\nweb \(TestKeys.a.openSSHLine)\n\n  web \(TestKeys.a.openSSHLine) x\n@revoked db \(TestKeys.b.openSSHLine)\nlast"
        let fix = TidyFix(file: TestKeys.file(text))
        XCTAssertEqual(String(decoding: try fix.rendered(removing: [4]), as: UTF8.self),
                       "# c\r\nweb \(TestKeys.a.openSSHLine)\n\n@revoked db \(TestKeys.b.openSSHLine)\nlast")
        XCTAssertThrowsError(try fix.rendered(removing: [5]), "a @revoked line is never removed")
    }

    /// Findings decided one line at a time must not together remove every plain line for a
    /// name: a different key would then be new to ssh instead of changed.
    func testFixKeepsTheFirstOfANamesLastPlainLines() {
        let file = TestKeys.file("db \(TestKeys.a.openSSHLine)\ndb \(TestKeys.b.openSSHLine)\nweb \(TestKeys.c.openSSHLine)\n"
            + "web \(TestKeys.c.openSSHLine)\n")
        let all = KnownHostsHygiene(files: [file]).findings()
        XCTAssertEqual(all.filter { $0.kind == .conflicting }.map(\.location.line), [1, 2])
        let plan = TidyFix.keepingEveryNamesLastLine(all.filter(\.removable), files: [file])
        XCTAssertEqual(plan.kept.map(\.location.line), [1], "one of the conflicting pair stays")
        XCTAssertEqual(Set(plan.remove.map(\.location.line)), [2, 4], "the other, and the duplicate whose twin stays")
        let alone = all.filter { $0.location.line == 4 }
        XCTAssertEqual(TidyFix.keepingEveryNamesLastLine(alone, files: [file]).remove.map(\.location.line), [4])
    }

    /// A line duplicated in another file is that file's only line for the name: a host whose
    /// UserKnownHostsFile is that file reads nothing else, so the line stays.
    func testFixKeepsTheLastPlainLineOfEachFile() {
        let main = TestKeys.file("lab1 \(TestKeys.a.openSSHLine)\n", path: "main_kh")
        let lab = TestKeys.file("lab1 \(TestKeys.a.openSSHLine)\n", path: "lab_kh")
        let all = KnownHostsHygiene(files: [main, lab]).findings()
        let duplicate = all.filter { $0.kind == .duplicate }
        XCTAssertEqual(duplicate.map(\.location.path), ["lab_kh"])
        let plan = TidyFix.keepingEveryNamesLastLine(duplicate, files: [main, lab])
        XCTAssertEqual(plan.remove, [])
        XCTAssertEqual(plan.kept.map(\.location.path), ["lab_kh"])
    }

    func testFixIsRefusedWhenTheFileChangedOtherwiseThanByAnAppend() throws {
        let path = NSTemporaryDirectory() + "tidy-cas-\(getpid())"
        defer { unlink(path) }
        let text = "web \(TestKeys.a.openSSHLine)\nweb \(TestKeys.a.openSSHLine)\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let file = try KnownHostsFile.read(path: path)
        try ("db \(TestKeys.b.openSSHLine)\n" + text).write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try TidyFix(file: file).apply(removing: [2]))
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "db \(TestKeys.b.openSSHLine)\n" + text)
    }

    func testAnAppendSinceTheFileWasReadIsKeptAfterTheFix() throws {
        let path = NSTemporaryDirectory() + "tidy-append-\(getpid())"
        defer { unlink(path) }
        let text = "web \(TestKeys.a.openSSHLine)\nweb \(TestKeys.a.openSSHLine)\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let file = try KnownHostsFile.read(path: path)
        try (text + "db \(TestKeys.b.openSSHLine)\n").write(toFile: path, atomically: true, encoding: .utf8)
        try TidyFix(file: file).apply(removing: [2])
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8),
                       "web \(TestKeys.a.openSSHLine)\ndb \(TestKeys.b.openSSHLine)\n")
    }

    /// A plain list's `127.0.0.1:2222` is the line's text, not a name `ssh` looks up: a known_hosts
    /// line under it is an unknown host (`ssh-keygen -F '[127.0.0.1]:2222'` never prints it), while
    /// an Ansible host's inventory name stays one of its names.
    func testAPlainInventoryLinesHostPortTextIsNoNameTheHostUses() {
        let plain = InventoryHost(name: "127.0.0.1:2222", address: "127.0.0.1", port: 2222, format: .plain)
        XCTAssertEqual(HygieneHost(plain).names, ["[127.0.0.1]:2222", "127.0.0.1"])
        let text = "127.0.0.1:2222 \(TestKeys.a.openSSHLine)\n[127.0.0.1]:2222 \(TestKeys.b.openSSHLine)\n"
        let result = KnownHostsHygiene(files: [TestKeys.file(text)], inventory: [HygieneHost(plain)]).findings()
        XCTAssertEqual(result.map(\.location.line), [1])
        XCTAssertEqual(result.map(\.kind), [.unknownHost])
        let ini = InventoryHost(name: "web1", address: "127.0.0.1", port: 2222, format: .ansibleINI)
        XCTAssertEqual(Set(HygieneHost(ini).names), ["[127.0.0.1]:2222", "127.0.0.1", "[web1]:2222", "web1"])
    }
}
