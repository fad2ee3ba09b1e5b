import Foundation
import XCTest
import FleetTrustTestFleet
@testable import FleetTrustCore

final class PinsTests: XCTestCase {
    let a = TestKeys.a, b = TestKeys.b

    func pins(_ text: String) throws -> PinSet { try PinSet.parse(path: "pins", bytes: Array(text.utf8)) }

    func testFingerprintsWithoutPrefixOrWithPaddingAreNormalised() throws {
        let bare = String(a.sha256Fingerprint.dropFirst(7))
        let set = try pins("# team pins\nweb,*.db.example \(bare)= \(b.sha256Fingerprint)\n")
        XCTAssertEqual(set.lines[0].fingerprints, [a.fingerprint, b.fingerprint])
        XCTAssertEqual(set.lines[0].number, 2)
    }

    func testErrorsNameFileAndLine() {
        XCTAssertThrowsError(try pins("ok \(a.sha256Fingerprint)\nweb SHA256:nope\n")) { error in
            XCTAssertEqual((error as? PinFileErrors)?.errors.map(\.line), [2])
            XCTAssertTrue("\(error)".hasPrefix("pins:2: "))
        }
        XCTAssertThrowsError(try pins("web\n"))
        XCTAssertThrowsError(try pins("web \(a.sha256Fingerprint) expires=2027-02-30\n"))
        XCTAssertThrowsError(try pins("web expires=2027-01-01 \(a.sha256Fingerprint)\n"))
    }

    func testAnIPv6AddressWrittenOtherwiseThanSSHWritesItIsRefusedWithTheFormToUse() throws {
        for pattern in ["*,!0:0:0:0:0:0:0:1", "[0::1]:2222", "2001:DB8::1", "!0::1%lo", "*,!127.1", "!0x7f.0.0.1", "[127.1]:22"] {
            XCTAssertThrowsError(try pins("\(pattern) \(a.sha256Fingerprint)\n"), pattern) { error in
                XCTAssertTrue("\(error)".hasPrefix("pins:1: "), "\(error)")
                XCTAssertTrue("\(error)".contains("write "), "\(error)")
            }
        }
        let set = try pins("*,!::1 \(a.sha256Fingerprint)\n[2001:db8::1]:2222 \(b.sha256Fingerprint)\n"
                           + "!fe80::1%eth0,127.0.0.1,db1.example.com,10.*,deadbeef.cafe \(b.sha256Fingerprint)\n")
        XCTAssertTrue(set.lines(for: ["::1"]).isEmpty, "the negated loopback address excludes it")
        XCTAssertEqual(set.lines(for: ["[2001:db8::1]:2222"]).map(\.number), [1, 2])
    }

    func testPinSetMatchesAnyPinnedKeyAndMismatchesOtherwise() throws {
        let set = try pins("web \(a.sha256Fingerprint) \(b.sha256Fingerprint)\n")
        let lookup = LookupName(host: "WEB", port: 2222)
        XCTAssertEqual(PinJudgement.judge(keys: [b], names: Self.names(lookup), pins: set, mode: .enforce).verdict, .matched)
        XCTAssertEqual(PinJudgement.judge(keys: [TestKeys.c], names: Self.names(lookup), pins: set, mode: .enforce).verdict, .mismatch)
        XCTAssertEqual(PinJudgement.judge(keys: [TestKeys.c], names: Self.names(lookup), pins: set, mode: .report).verdict, .reportedMismatch)
        XCTAssertEqual(PinJudgement.judge(keys: [TestKeys.c], names: Self.names(LookupName(host: "db")), pins: set, mode: .enforce).verdict, .unpinned)
    }

    func testExpiredPinsNoLongerBind() throws {
        let set = try pins("web \(a.sha256Fingerprint) expires=2027-01-31\n")
        let lastSecond: UInt64 = 1_801_439_999, after: UInt64 = 1_801_440_000
        XCTAssertEqual(PinJudgement.judge(keys: [b], names: Self.names(LookupName(host: "web")), pins: set, mode: .enforce, now: lastSecond).verdict, .mismatch)
        XCTAssertEqual(PinJudgement.judge(keys: [b], names: Self.names(LookupName(host: "web")), pins: set, mode: .enforce, now: after).verdict, .expired)
    }

    static func names(_ lookup: LookupName) -> [String] { [lookup.name, lookup.hostString] }

    private func judged(_ host: InventoryHost, keys: [HostKey], known: String = "", pins set: PinSet?, mode: PinMode = .enforce) -> JudgedHost {
        FleetJudge(knownHosts: KnownHosts(files: [TestKeys.file(known)]), pins: set, pinMode: mode)
            .judge(host, ProbeResult(host: host.name, port: host.port, keys: keys.map { DiscoveredKey(key: $0) }))
    }

    func testPinMismatchMakesTheHostPinMismatchWhateverKnownHostsSays() throws {
        let set = try pins("web \(b.sha256Fingerprint)\n")
        let host = InventoryHost(name: "web")
        XCTAssertEqual(judged(host, keys: [a], known: "web \(a.openSSHLine)\n", pins: set).status, .pinMismatch)
        let reported = judged(host, keys: [a], known: "web \(a.openSSHLine)\n", pins: set, mode: .report)
        XCTAssertEqual(reported.status, .trusted)
        XCTAssertEqual(reported.pin.verdict, .reportedMismatch, "a reported mismatch is still in the judgement")
    }

    func testAReportedMismatchIsNeverOfferedForSaving() throws {
        let set = try pins("web \(b.sha256Fingerprint)\n")
        let host = judged(InventoryHost(name: "web"), keys: [a], pins: set, mode: .report)
        XCTAssertEqual(host.status, .new)
        XCTAssertEqual(host.saving, .refused(.pinMismatch), "the team's pins disagree, even if only reported")
        XCTAssertEqual(judged(InventoryHost(name: "web"), keys: [a], pins: nil).saving, .save([a]))
    }

    func testEachKeySaysWhetherItIsTheOnePinned() throws {
        let set = try pins("web \(a.sha256Fingerprint)\n")
        let host = judged(InventoryHost(name: "web"), keys: [a, TestKeys.c], pins: set)
        XCTAssertEqual(host.pin.verdict, .matched)
        XCTAssertEqual(host.keys.map(\.pin), [.matched, .notListed], "only the pinned key is matched")
        let unpinned = judged(InventoryHost(name: "db"), keys: [a], pins: set)
        XCTAssertEqual(unpinned.keys.map(\.pin), [.unpinned])
    }

    func testAPinAppliesThroughAnyOfTheHostsNames() throws {
        let set = try pins("web*.example.com \(b.sha256Fingerprint)\n")
        let ansible = InventoryHost(name: "web1.example.com", address: "10.0.0.5")
        XCTAssertEqual(judged(ansible, keys: [a], pins: set).status, .pinMismatch, "the inventory name carries the pin")
        let byAddress = try pins("10.0.0.5 \(b.sha256Fingerprint)\n")
        XCTAssertEqual(judged(InventoryHost(name: "web1", address: "10.0.0.5", port: 2222), keys: [a], pins: byAddress).status,
                       .pinMismatch, "the address, bare, applies on any port")
        let byAlias = try pins("web1.prod \(a.sha256Fingerprint)\n")
        XCTAssertEqual(judged(InventoryHost(name: "x", address: "10.0.0.5", hostKeyAlias: "web1.prod"), keys: [a], pins: byAlias).pin.verdict,
                       .matched)
        let byPort = try pins("[web1]:2222 \(b.sha256Fingerprint)\n")
        XCTAssertEqual(judged(InventoryHost(name: "web1", address: "10.0.0.5", port: 2222), keys: [a], pins: byPort).status, .pinMismatch)
        XCTAssertEqual(judged(InventoryHost(name: "web1", address: "10.0.0.5", port: 22), keys: [a], pins: byPort).pin.verdict, .unpinned)
    }

    func testPinLinesThatApplyToNoHostAreFound() throws {
        let set = try pins("web1 \(a.sha256Fingerprint)\nwbe2 \(a.sha256Fingerprint)\n")
        let judge = FleetJudge(knownHosts: KnownHosts(files: []), pins: set)
        XCTAssertEqual(judge.pinLinesApplyingToNone(of: [InventoryHost(name: "web1"), InventoryHost(name: "web2")]).map(\.number), [2])
    }

    func testPinWriterAppendsAndRefusesAConcurrentChangeForThePatterns() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ft-pins-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = FileManager.default.createFile(atPath: path, contents: Data("# pins\nweb \(a.sha256Fingerprint)".utf8))
        let before = [UInt8](FileManager.default.contents(atPath: path)!)
        let writer = PinFileWriter(path: path)
        try writer.addPin(patterns: "db", fingerprints: [String(b.sha256Fingerprint.dropFirst(7))], expires: "2030-01-01", basedOn: before)
        XCTAssertEqual(String(decoding: FileManager.default.contents(atPath: path)!, as: UTF8.self),
                       "# pins\nweb \(a.sha256Fingerprint)\ndb \(b.sha256Fingerprint) expires=2030-01-01\n")
        XCTAssertThrowsError(try writer.addPin(patterns: "db", fingerprints: [a.sha256Fingerprint], basedOn: before))
        XCTAssertNoThrow(try writer.addPin(patterns: "other", fingerprints: [a.sha256Fingerprint], basedOn: before))
    }

    func testEveryBadLineIsReportedAtOnceAndTheGoodOnesKept() {
        let text = """
        good \(a.sha256Fingerprint)
        lonely-pattern
        short \(a.sha256Fingerprint.dropLast())
        md5 MD5:16:27:ac:a5:76:28:2d:36:63:1b:56:4d:eb:df:a6:48
        date \(a.sha256Fingerprint) expires=2027-02-29
        twice \(a.sha256Fingerprint) expires=2027-01-01 expires=2027-01-02
        ctl \(a.sha256Fingerprint)\u{1b}[31m
        only expires=2027-01-01
        alsogood \(b.sha256Fingerprint)
        """
        let bytes = Array(text.utf8) + [0x0a, 0x78, 0xff, 0x20] + Array(a.sha256Fingerprint.utf8)
        let set = PinSet(path: "team.pins", bytes: bytes)
        XCTAssertEqual(set.lines.map(\.patterns.text), ["good", "alsogood"])
        XCTAssertEqual(set.errors.map(\.line), [2, 3, 4, 5, 6, 7, 8, 10])
        XCTAssertEqual(set.errors[0].description, "team.pins:2: a host pattern needs at least one fingerprint")
        XCTAssertEqual(set.errors[2].description, "team.pins:4: MD5 fingerprints are not accepted; use the SHA256 one (ssh-keygen -lf)")
        XCTAssertEqual(set.errors[5].description, "team.pins:7: the line contains a control character")
        XCTAssertEqual(set.errors[7].description, "team.pins:10: the line is not valid UTF-8")
        XCTAssertThrowsError(try PinSet.parse(path: "team.pins", bytes: bytes)) { error in
            XCTAssertEqual((error as? PinFileErrors)?.errors, set.errors)
            XCTAssertEqual("\(error)".split(separator: "\n").count, 8)
        }
    }

    func testCommentsBlanksCRLFAndTabsAreRead() throws {
        let set = try pins("# team pins\r\n\r\n  web*,!web9\t\(a.sha256Fingerprint) \(b.sha256Fingerprint) expires=2027-02-28\r\n   # indented\nlast \(a.sha256Fingerprint)")
        XCTAssertEqual(set.lines.map(\.patterns.text), ["web*,!web9", "last"])
        XCTAssertEqual(set.lines.map(\.number), [3, 5])
        XCTAssertEqual(set.lines[0].fingerprints, [a.fingerprint, b.fingerprint])
    }

    func testPinOfARealKeyEqualsWhatSshKeygenPrints() throws {
        let directory = NSTemporaryDirectory() + "ft-pins-keygen-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Tool.check("/usr/bin/ssh-keygen", ["-q", "-t", "ecdsa", "-N", "", "-f", directory + "/k"])
        let printed = try Tool.check("/usr/bin/ssh-keygen", ["-lf", directory + "/k.pub"]).split(separator: " ")[1]
        let key = try HostKey(openSSHLine: String(contentsOfFile: directory + "/k.pub", encoding: .utf8))
        for written in [printed, printed.dropFirst("SHA256:".count)] {
            let set = try pins("h \(written)\n")
            XCTAssertEqual(PinJudgement.judge(keys: [key], names: Self.names(LookupName(host: "h")), pins: set, mode: .enforce).verdict, .matched)
        }
    }

    /// Each key type comes over its own connection: one pinned key proves only itself. A key no
    /// pin names, while a pinned fingerprint matches no presented key, may be that pin's type
    /// shown by another machine: a mismatch. A type the pins do not cover at all is not.
    func testAPinVouchesOnlyForTheKeysItNames() throws {
        let names = Self.names(LookupName(host: "web"))
        let all = try pins("web \(a.sha256Fingerprint) \(TestKeys.ecdsa.sha256Fingerprint)\n")
        let split = PinJudgement.judge(keys: [a, TestKeys.c], names: names, pins: all, mode: .enforce)
        XCTAssertEqual(split.verdict, .mismatch, "the ECDSA pin matches nothing, and c is named by no pin")
        XCTAssertEqual(split.verdict(for: a), .matched)
        XCTAssertEqual(split.verdict(for: TestKeys.c), .mismatch)
        XCTAssertEqual(PinJudgement.judge(keys: [a, TestKeys.c], names: names, pins: all, mode: .report).verdict, .reportedMismatch)
        XCTAssertEqual(PinJudgement.judge(keys: [a, TestKeys.ecdsa], names: names, pins: all, mode: .enforce).verdict, .matched)
        let one = try pins("web \(a.sha256Fingerprint)\n")
        let uncovered = PinJudgement.judge(keys: [a, TestKeys.ecdsa], names: names, pins: one, mode: .enforce)
        XCTAssertEqual(uncovered.verdict, .matched, "every pin is accounted for: the ECDSA type is not covered")
        XCTAssertEqual(uncovered.verdict(for: TestKeys.ecdsa), .notListed)
    }

    func testRotationSetSpansLinesAndEvidenceNamesTheLine() throws {
        let set = try pins("web* \(a.sha256Fingerprint)\nweb1,web2 \(b.sha256Fingerprint)\n")
        let next = PinJudgement.judge(keys: [b], names: Self.names(LookupName(host: "WEB2")), pins: set, mode: .enforce)
        XCTAssertEqual(next.verdict, .matched)
        XCTAssertEqual(next.evidence.map(\.line), [2])
        let wrong = PinJudgement.judge(keys: [TestKeys.c], names: Self.names(LookupName(host: "web1")), pins: set, mode: .enforce)
        XCTAssertEqual(wrong.verdict, .mismatch)
        XCTAssertEqual(Set(wrong.evidence.map(\.line)), [1, 2])
    }

    func testNegationAndPortForms() throws {
        let set = try pins("*.example.com,!db.example.com \(a.sha256Fingerprint)\n[10.0.0.1]:2222 \(a.sha256Fingerprint)\n")
        func verdict(_ host: String, _ port: Int = 22) -> PinVerdict {
            PinJudgement.judge(keys: [TestKeys.c], names: Self.names(LookupName(host: host, port: port)), pins: set, mode: .enforce).verdict
        }
        XCTAssertEqual(verdict("db.example.com"), .unpinned)
        XCTAssertEqual(verdict("web.example.com"), .mismatch)
        XCTAssertEqual(verdict("10.0.0.1", 2222), .mismatch)
        XCTAssertEqual(verdict("10.0.0.1"), .unpinned)
    }

    func testExpiredPinDoesNotBindWhileAnotherStillDoes() throws {
        let set = try pins("web \(a.sha256Fingerprint) expires=2027-01-01\nweb \(b.sha256Fingerprint)\n")
        let later: UInt64 = 1_803_859_200
        XCTAssertEqual(PinJudgement.judge(keys: [a], names: Self.names(LookupName(host: "web")), pins: set, mode: .enforce, now: later).verdict, .mismatch)
        XCTAssertEqual(PinJudgement.judge(keys: [b], names: Self.names(LookupName(host: "web")), pins: set, mode: .enforce, now: later).verdict, .matched)
    }

    func testPinWriterKeepsEveryOtherByte() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ft-pins-bytes-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let original = "# pins\r\nweb \(a.sha256Fingerprint)\r\n\tjunk line\n\u{1}\u{ff}odd\nno-newline \(b.sha256Fingerprint)"
        _ = FileManager.default.createFile(atPath: path, contents: Data(original.utf8))
        try PinFileWriter(path: path).addPin(patterns: "[db]:2222", fingerprints: [a.sha256Fingerprint])
        XCTAssertEqual(String(decoding: FileManager.default.contents(atPath: path)!, as: UTF8.self),
                       original + "\n[db]:2222 \(a.sha256Fingerprint)\n")
    }

    /// The indexed lookup finds exactly the lines that evaluating every line's patterns finds,
    /// whatever the spelling: case, wildcards, negation, ports, brackets, CIDR-looking and empty
    /// elements, non-ASCII. An index that missed a line would leave a pinned host unpinned.
    func testIndexedLookupFindsExactlyTheLinesEveryPatternMatches() throws {
        var generator = SeededGenerator(seed: 0x9105)
        let words = ["web1", "WEB1", "Web1", "web*", "w?b1", "!web1", "[web1]:2222", "[WEB1]:2222", "10.0.0.1", "10.0.0.0/8",
                     "db.example", "DB.Example", "*", "", "héllo", "HÉLLO", "[::1]:22", "a,b"]
        for _ in 0..<300 {
            let lines = (0..<Int.random(in: 1...12, using: &generator)).map { _ in
                (0..<Int.random(in: 1...3, using: &generator)).map { _ in words.randomElement(using: &generator)! }
                    .joined(separator: ",") + " SHA256:\(a.sha256Fingerprint)"
            }
            let set = PinSet(path: "p", bytes: Array(lines.joined(separator: "\n").utf8))
            for _ in 0..<8 {
                let names = (0..<Int.random(in: 1...3, using: &generator)).map { _ in words.randomElement(using: &generator)! }
                let lowered = Set(names).map { KnownHostsPattern.lowercased(Array($0.utf8)) }
                let everyLine = set.lines.filter { line in lowered.contains { line.patterns.match($0) == .match } }
                XCTAssertEqual(set.lines(for: names).map(\.number), everyLine.map(\.number), "\(lines) for \(names)")
            }
        }
    }

    func testRandomBytesNeverCrashTheReader() {
        let alphabet = Array("SHA256:\(a.sha256Fingerprint) ,!*?#=expires-2027\r\n\t\u{0}".utf8) + [0xff, 0xc3]
        for _ in 0..<2_000 {
            let bytes = (0..<Int.random(in: 0...300)).map { _ in Bool.random() ? alphabet.randomElement()! : UInt8.random(in: 0...255) }
            let set = PinSet(path: "r", bytes: bytes)
            _ = PinJudgement.judge(keys: [a], names: Self.names(LookupName(host: "h")), pins: set, mode: .enforce)
            XCTAssertTrue(set.errors.allSatisfy { $0.line >= 1 && !$0.description.contains("\u{1b}") })
        }
    }
}
