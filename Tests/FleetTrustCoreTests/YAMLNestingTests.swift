import XCTest
@testable import FleetTrustCore

/// The nesting bound is the depth Yams would compose, counted by libyaml itself: brackets inside
/// quotes, comments and block scalars are text, not levels, and nothing can hide a real level.
final class YAMLNestingTests: XCTestCase {
    private func nested(_ depth: Int) -> String { String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }

    func testTheLimitItselfIsReadAndOneMoreLevelIsRefusedAtItsLine() {
        XCTAssertNil(YAMLNesting.firstTooDeep("x: \(nested(499))\n"), "499 flow levels under a mapping: 500 in all")
        XCTAssertEqual(YAMLNesting.firstTooDeep("a: 1\nx: \(nested(500))\n"), 2)
        XCTAssertEqual(YAMLNesting.firstTooDeep("{\"all\": {\"hosts\":\n\(nested(100_000))}}"), 2)
    }

    func testBracketsInQuotesCommentsAndBlockScalarsAreNotLevels() {
        let brackets = String(repeating: "[{", count: 2_000)
        let text = """
            all:
              vars:
                single: '\(brackets)'
                double: "\(brackets)"
                plain: a\(brackets)
                literal: |
                  \(brackets)
              # \(brackets)
              hosts:
                web1:

            """
        XCTAssertNil(YAMLNesting.firstTooDeep(text))
    }

    func testQuotedClosersCannotHideRealLevels() {
        XCTAssertNotNil(YAMLNesting.firstTooDeep("x: " + String(repeating: "[']', ", count: 1_000)))
        XCTAssertNotNil(YAMLNesting.firstTooDeep("{\"a\": " + String(repeating: "[\"]}\", ", count: 1_000)))
        XCTAssertNotNil(YAMLNesting.firstTooDeep("x: # ]]]]\n" + String(repeating: "- ", count: 1_000) + "v\n"))
    }

    func testBlockNestingCountsAsWell() {
        var text = ""
        for level in 0..<600 { text += String(repeating: " ", count: level) + "k\(level):\n" }
        XCTAssertEqual(YAMLNesting.firstTooDeep(text), 501)
    }
}
