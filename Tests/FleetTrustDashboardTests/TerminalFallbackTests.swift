@testable import FleetTrustDashboard
import XCTest

/// What the curses layer does for terminals that are not a UTF-8 xterm: the pure parts of it.
final class TerminalFallbackTests: XCTestCase {
    func testATerminalThatCannotBeUsedIsExplainedInOneSentenceNamingTERM() {
        let reasons: [TerminalUnavailable] = [.noTerminalType, .noTerminal, .noTerminfo, .unknownType("vt999"), .cannotAddressCursor("dumb")]
        for reason in reasons {
            let sentence = reason.description
            XCTAssertFalse(sentence.contains("\n"), sentence)
            XCTAssertFalse(sentence.hasSuffix("."), sentence)
            XCTAssertTrue(sentence.contains("fleettrust scan"), sentence)
        }
        XCTAssertTrue(TerminalUnavailable.unknownType("vt999").description.hasPrefix("TERM=vt999 "))
        XCTAssertTrue(TerminalUnavailable.cannotAddressCursor("dumb").description.hasPrefix("TERM=dumb cannot move the cursor"))
    }
}
