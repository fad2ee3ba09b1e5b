import Foundation
import XCTest
@testable import FleetTrustCore

/// Every document fleettrust prints writes an empty list or object as `[]` / `{}`, and only those.
final class ReportJSONTests: XCTestCase {
    private struct Sample: Encodable {
        var empty: [Int] = []
        var nested: [String: [String]] = ["inner": [], "full": ["a"]]
        var none: [String: Int] = [:]
        var text = "[\n\n]"
    }

    func testEmptyContainersAreWrittenOnOneLineAndStringsAreLeftAlone() throws {
        let json = String(decoding: try ReportJSON.encode(Sample()), as: UTF8.self)
        XCTAssertTrue(json.contains("\"empty\" : []"), json)
        XCTAssertTrue(json.contains("\"inner\" : []"), json)
        XCTAssertTrue(json.contains("\"none\" : {}"), json)
        XCTAssertTrue(json.contains("\"full\" : [\n      \"a\"\n    ]"), json)
        XCTAssertTrue(json.contains(#""text" : "[\n\n]""#), "a string's escaped line breaks are not structure: \(json)")
        XCTAssertFalse(json.contains("[\n\n"), json)
        let decoded = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        XCTAssertEqual(decoded?["text"] as? String, "[\n\n]")
    }
}
