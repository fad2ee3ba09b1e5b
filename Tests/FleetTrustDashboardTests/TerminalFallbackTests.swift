import CNcurses
@testable import FleetTrustDashboard
import XCTest

/// What the curses layer does for terminals that are not a UTF-8 xterm: the pure parts of it.
final class TerminalFallbackTests: XCTestCase {
    func testEveryGlyphTheViewsDrawHasAnASCIILookAlikeOfTheSameWidth() {
        XCTAssertEqual(ASCIIGlyphs.ascii(" 8 shown · sort status · all"), " 8 shown - sort status - all")
        XCTAssertEqual(ASCIIGlyphs.ascii("↑↓ move  127.0.0.1…  ·····  banner│ x"), "^v move  127.0.0.1~  -----  banner| x")
        for (glyph, lookAlike) in ASCIIGlyphs.lookAlikes {
            XCTAssertTrue(lookAlike.isASCII, "\(glyph)")
            XCTAssertEqual(DisplayWidth.of(glyph), DisplayWidth.of(lookAlike), "\(glyph)")
        }
    }

    func testOtherCharactersBecomeOneQuestionMarkPerColumnSoLayoutIsUnchanged() {
        for text in ["主机-a", "café", "e\u{301}x", "ключ", "plain ascii"] {
            let ascii = ASCIIGlyphs.ascii(text)
            XCTAssertTrue(ascii.unicodeScalars.allSatisfy(\.isASCII), ascii)
            XCTAssertEqual(DisplayWidth.of(ascii), DisplayWidth.of(text), text)
        }
        XCTAssertEqual(ASCIIGlyphs.ascii("主机-a"), "????-a")
    }

    func testHomeAndEndAreReadInEveryFormTerminalsSend() {
        let sequences = Dictionary(grouping: CursesTerminal.editingKeys, by: \.key).mapValues { $0.map(\.sequence) }
        XCTAssertEqual(Set(sequences.keys), [KEY_HOME, KEY_END])
        XCTAssertTrue(sequences[KEY_HOME]!.contains("\u{1b}[1~"))
        XCTAssertTrue(sequences[KEY_END]!.contains("\u{1b}[4~"))
    }

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
