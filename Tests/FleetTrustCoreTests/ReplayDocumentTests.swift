import XCTest
@testable import FleetTrustCore

/// The recorded-scan splitter finds each host entry as JSON does, whatever its strings hold,
/// and refuses what is not a scan document in one sentence.
final class ReplayDocumentTests: XCTestCase {
    func testHostEntriesAreFoundWhateverTheirStringsAndNestingHold() throws {
        let json = #"""
            { "generated_at": "x", "summary": {"total": 2, "by_status": {"a]": 1}}, "version" : 2,
              "hosts" : [ {"name": "a \"}]\\", "keys": [[], {"k": "[{"}]}, 
                          {"name": "b", "n": -1.5e3, "t": true, "z": null} ], "skipped": [] }
            """#
        let data = Data(json.utf8)
        let document = try ReplayDocument(data)
        XCTAssertEqual(document.version, 2)
        let entries = document.hosts.map { String(decoding: data[$0], as: UTF8.self) }
        XCTAssertEqual(entries, [#"{"name": "a \"}]\\", "keys": [[], {"k": "[{"}]}"#,
                                 #"{"name": "b", "n": -1.5e3, "t": true, "z": null}"#])
        for entry in entries { XCTAssertNoThrow(try JSONSerialization.jsonObject(with: Data(entry.utf8))) }
        XCTAssertEqual(try ReplayDocument(Data(#"{"hosts": [], "version": 1}"#.utf8)).hosts, [])
    }

    func testWhatIsNotAScanDocumentIsRefusedInOneSentence() {
        let cases: [(String, String)] = [
            (#"{"version": 2, "hosts": ["#, "ends early"),
            (#"{"hosts": []}"#, "missing .version"),
            (#"{"version": 2}"#, "missing .hosts"),
            (#"[1]"#, "'{' expected at byte 0"),
            (#"{"version": "2", "hosts": []}"#, "wrong type at .version"),
            (#"{"version": 2, "hosts": {}}"#, "wrong type at .hosts"),
            (#"{"version": 2, "hosts": []} x"#, "data after the document"),
            (#"{"version": 2, "hosts": ["a]}"#, "not closed"),
            ("{\"version\": 2, \"hosts\": [" + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "]}",
             "nested too deep"),
        ]
        for (json, expected) in cases {
            XCTAssertThrowsError(try ReplayDocument(Data(json.utf8)), json) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(json): \(error)")
            }
        }
    }

    func testABadHostEntryIsNamedByItsIndexAndField() {
        let json = #"{"version": 2, "hosts": [{"name": "a", "host": "a", "port": 22, "status": "new", "keys": []}, {"name": 7}]}"#
        XCTAssertThrowsError(try ScanReplay.load(Data(json.utf8), source: "old.json")) { error in
            XCTAssertEqual("\(error)", "old.json: not a fleettrust scan JSON document (wrong type at .hosts[1].name)")
        }
    }
}

/// Replay's input is strict: a value this version cannot type is refused with the host's index,
/// never read as a default (a recorded alarm must not come back quieter); versions 1 to 3 read.
final class StrictReplayInputTests: XCTestCase {
    private let key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICa+KH5Vx9v59VXPMsxNGf4dP8Zd8JjLkSjMzPVMUHCW"

    private func document(version: Int = 3, second: String) -> Data {
        let good = #"{"name": "a", "host": "a", "port": 22, "status": "new", "keys": [{"type": "ssh-ed25519", "key": "\#(key)", "verdict": "new"}]}"#
        return Data(#"{"version": \#(version), "generated_at": "2026-11-23T12:00:00Z", "hosts": [\#(good), \#(second)], "summary": {"total": 2, "by_status": {}, "exit_status": 1}}"#.utf8)
    }

    func testUnknownStatusVerdictCodeOrStageIsRefusedWithTheHostsIndex() {
        let cases: [(String, String)] = [
            (#"{"name": "b", "host": "b", "port": 22, "status": "fine", "keys": []}"#, ".hosts[1].status"),
            (#"{"name": "b", "host": "b", "port": 22, "status": "new", "keys": [{"type": "ssh-ed25519", "key": "\#(key)", "verdict": "ok"}]}"#,
             ".hosts[1].keys[0].verdict"),
            (#"{"name": "b", "host": "b", "port": 22, "status": "error", "keys": [], "error": {"stage": "connect", "code": "gremlins", "message": "x"}}"#,
             ".hosts[1].error.code"),
            (#"{"name": "b", "host": "b", "port": 22, "status": "error", "keys": [], "error": {"stage": "teleport", "code": "other", "message": "x"}}"#,
             ".hosts[1].error"),
            (#"{"name": "b", "host": "b", "port": 22, "status": "new", "keys": [], "drift": "sideways"}"#, ".hosts[1].drift"),
            (#"{"name": "b", "host": "b", "port": 22, "status": "new", "keys": [], "scanned_at": "yesterday"}"#,
             "hosts[1] (b): scanned_at is not an RFC 3339 UTC time"),
        ]
        for (second, expected) in cases {
            XCTAssertThrowsError(try ScanReplay.load(document(second: second), source: "in.json"), second) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(expected) not in: \(error)")
            }
        }
    }

    func testVersionTwoDocumentsStillReplayAndFourIsRefused() throws {
        let v2 = #"{"name": "b", "host": "b", "port": 22, "status": "new", "keys": [], "shares_keys_with": ["a"]}"#
        let pairs = try ScanReplay.load(document(version: 2, second: v2), source: "v2.json")
        XCTAssertEqual(pairs.map(\.host.name), ["a", "b"])
        XCTAssertNil(pairs[1].result.scanner, "a version 2 document names no scanner")
        XCTAssertEqual(pairs[1].result.finishedAt, HistoryTime.date(rfc3339: "2026-11-23T12:00:00Z"))
        XCTAssertEqual(try RecordedScan.decode(document(version: 2, second: v2)).hosts[1].sharesKeysWith, ["a"])
        XCTAssertThrowsError(try ScanReplay.load(document(version: 4, second: v2), source: "new.json")) { error in
            XCTAssertEqual("\(error)", "new.json: scan document version 4 is not supported (expected 1 to 3)")
        }
    }

    func testRFC3339TimesReadBackOnlyInTheFormWritten() {
        XCTAssertEqual(HistoryTime.date(rfc3339: "2026-11-23T12:00:05Z")?.timeIntervalSince1970, 1_795_435_205)
        for bad in ["2026-11-23T12:00:05+01:00", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z", "2026-11-23 12:00:05Z", ""] {
            XCTAssertNil(HistoryTime.date(rfc3339: bad), bad)
        }
    }
}
