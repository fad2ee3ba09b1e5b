@testable import FleetTrustDashboard
import Foundation
import XCTest

final class ThemeTests: XCTestCase {
    static let themesDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("themes").path

    func testEveryShippedThemeParsesAndStylesEveryRole() throws {
        for name in ["default", "light", "high-contrast", "monochrome"] {
            let theme = try Theme.load(name, searching: [ThemeTests.themesDirectory])
            XCTAssertEqual(theme.name, name)
            XCTAssertEqual(Set(theme.styles.keys), Set(StyleRole.allCases), name)
        }
    }

    func testMonochromeUsesNoColourAndStillTellsProblemsApart() throws {
        let theme = try Theme.load("monochrome", searching: [ThemeTests.themesDirectory])
        XCTAssertTrue(theme.styles.values.allSatisfy { $0.foreground == .terminalDefault && $0.background == .terminalDefault })
        XCTAssertNotEqual(theme.style(.statusChanged), theme.style(.statusTrusted))
        XCTAssertNotEqual(theme.style(.selected), theme.style(.normal))
    }

    func testAnUnknownRoleIsReportedWithFileAndLine() {
        let text = "# comment\nnormal = default, default\nstatus-bogus = red, default\n"
        XCTAssertThrowsError(try Theme.parse(text, name: "t", file: "t.theme")) { error in
            let error = error as! ThemeError
            XCTAssertEqual(error.line, 3)
            XCTAssertTrue(error.description.hasPrefix("t.theme:3: unknown role 'status-bogus'"), error.description)
        }
    }

    func testBadColoursAttributesAndMissingFieldsAreReportedWithTheirLine() {
        let cases = ["header = purple, default": "unknown colour 'purple'",
                     "header = red, 256": "unknown colour '256'",
                     "header = red, default, blink": "unknown attribute 'blink'",
                     "header = red": "needs a foreground and a background",
                     "header red default": "expected `role = "]
        for (line, message) in cases {
            XCTAssertThrowsError(try Theme.parse("\n" + line, name: "t", file: "f")) { error in
                XCTAssertEqual((error as! ThemeError).line, 2, line)
                XCTAssertTrue("\(error)".contains(message), "\(error)")
            }
        }
    }

    func testARoleDefinedTwiceIsAnError() {
        XCTAssertThrowsError(try Theme.parse("normal = red, default\nnormal = blue, default", name: "t", file: "f")) {
            XCTAssertEqual(($0 as! ThemeError).line, 2)
        }
    }

    func testColoursByNameBrightNameAndNumberAndRolesLeftOutFallBackToNormal() throws {
        let theme = try Theme.parse("normal = white, black\nheader = bright-red, 17, bold underline", name: "t", file: "f")
        XCTAssertEqual(theme.style(.header), Style(foreground: .indexed(9), background: .indexed(17), attributes: [.bold, .underline]))
        XCTAssertEqual(theme.style(.dialog), Style(foreground: .indexed(7), background: .indexed(0)))
    }

    func testAMissingThemeSaysWhereItLooked() {
        XCTAssertThrowsError(try Theme.load("nope", searching: ["/a", "/b"])) {
            XCTAssertTrue("\($0)".contains("/a/nope.theme, /b/nope.theme"), "\($0)")
        }
    }

    func testEightColourTerminalsGetTheBasicColourAndBoldForBrightOnes() {
        XCTAssertTrue(CursesPalette.map(.indexed(9), colors: 8) == (1, true))
        XCTAssertTrue(CursesPalette.map(.indexed(2), colors: 8) == (2, false))
        XCTAssertTrue(CursesPalette.map(.indexed(196), colors: 8) == (1, true))
        XCTAssertTrue(CursesPalette.map(.indexed(196), colors: 16) == (9, false))
        XCTAssertTrue(CursesPalette.map(.indexed(196), colors: 256) == (196, false))
        XCTAssertTrue(CursesPalette.map(.terminalDefault, colors: 8) == (-1, false))
    }

    func testWithoutColourKeepsAttributesAndGivesColourOnlyRolesOne() throws {
        let theme = try Theme.load("default", searching: [ThemeTests.themesDirectory]).withoutColor
        XCTAssertTrue(theme.styles.values.allSatisfy { $0.foreground == .terminalDefault && $0.background == .terminalDefault })
        XCTAssertEqual(theme.style(.selected).attributes, [.reverse])
        XCTAssertTrue(theme.style(.statusChanged).attributes.contains(.bold))
    }

    func testThemesAreFoundNextToTheExecutableAndThroughTheEnvironment() {
        let directories = Theme.searchDirectories(executable: "/opt/x/.build/debug/fleettrust", environment: ["FLEETTRUST_THEMES": "/custom"])
        XCTAssertEqual(directories.first, "/custom")
        XCTAssertTrue(directories.contains("/opt/x/themes"))
    }

    func testWindowsLineEndingsAreReadLineByLine() throws {
        let theme = try Theme.parse("# comment\r\nheader = red, blue, bold\r\nselected = black, white\r\n", name: "crlf", file: "crlf.theme")
        XCTAssertEqual(theme.styles[.header]?.foreground, .indexed(1))
        XCTAssertNotNil(theme.styles[.selected])
    }
}
