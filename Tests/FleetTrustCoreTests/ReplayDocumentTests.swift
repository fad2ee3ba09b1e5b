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
        let json = #"{"version": 2, "hosts": [{"name": "a", "host": "a", "port": 22, "keys": []}, {"name": 7}]}"#
        XCTAssertThrowsError(try ScanReplay.load(Data(json.utf8), source: "old.json")) { error in
            XCTAssertEqual("\(error)", "old.json: not a fleettrust scan JSON document (wrong type at .hosts[1].name)")
        }
    }
}
