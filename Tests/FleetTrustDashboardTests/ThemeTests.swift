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

    func testAMissingThemeNamesTheThemesThereAreEachOnce() throws {
        let directory = NSTemporaryDirectory() + "themes-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for name in ["dark", "light"] { try "normal = white, black\n".write(toFile: "\(directory)/\(name).theme", atomically: true, encoding: .utf8) }
        XCTAssertThrowsError(try Theme.load("nope", searching: [directory, directory, "/a"])) {
            XCTAssertTrue("\($0)".contains("theme not found (looked for \(directory)/nope.theme); the themes are dark, light"), "\($0)")
        }
        let searched = Theme.searchDirectories(executable: "/opt/x/bin/fleettrust", environment: [:])
        XCTAssertEqual(searched.count, Set(searched).count, "a directory searched twice: \(searched)")
    }

    func testAMissingThemeSaysWhereItLooked() {
        XCTAssertThrowsError(try Theme.load("nope", searching: ["/a", "/b"])) {
            XCTAssertTrue("\($0)".contains("/a/nope.theme, /b/nope.theme"), "\($0)")
        }
    }

    func testEightColourTerminalsGetTheBasicColourAndBoldForBrightOnes() {
        XCTAssertTrue(CursesPalette.foreground(.indexed(9), colors: 8) == (1, .bold))
        XCTAssertTrue(CursesPalette.foreground(.indexed(2), colors: 8) == (2, nil))
        XCTAssertTrue(CursesPalette.foreground(.indexed(196), colors: 8) == (1, .bold))
        XCTAssertTrue(CursesPalette.foreground(.indexed(196), colors: 16) == (9, nil))
        XCTAssertTrue(CursesPalette.foreground(.indexed(196), colors: 256) == (196, nil))
        XCTAssertTrue(CursesPalette.foreground(.terminalDefault, colors: 8) == (-1, nil))
        XCTAssertEqual(CursesPalette.background(.indexed(12), colors: 8), 4)
        XCTAssertEqual(CursesPalette.background(.terminalDefault, colors: 8), -1)
    }

    func testEightColourTerminalsDrawGreyTextDimInTheTerminalsOwnColourNotAsBoldBlack() {
        for grey in [8, 59, 102, 145, 235, 240, 244, 249] {
            XCTAssertTrue(CursesPalette.foreground(.indexed(grey), colors: 8) == (-1, .dim), "\(grey)")
        }
        XCTAssertTrue(CursesPalette.foreground(.indexed(240), colors: 16) == (8, nil), "dark grey is bright black on 16 colours")
        XCTAssertTrue(CursesPalette.foreground(.indexed(252), colors: 8) == (7, .bold))
        XCTAssertTrue(CursesPalette.foreground(.indexed(0), colors: 8) == (0, nil), "black stays black")
    }

    func testDarkColoursKeepTheirHueOnEightColourTerminals() {
        XCTAssertTrue(TerminalColor.indexed(28).basic! == (2, false), "dark green")
        XCTAssertTrue(TerminalColor.indexed(130).basic! == (1, false), "dark orange")
        XCTAssertTrue(TerminalColor.indexed(24).basic! == (4, false), "dark blue")
        XCTAssertTrue(TerminalColor.indexed(214).basic! == (3, true), "orange")
    }

    func testWithoutColourKeepsAttributesAndGivesColourOnlyRolesOne() throws {
        let theme = try Theme.load("default", searching: [ThemeTests.themesDirectory]).withoutColor
        XCTAssertTrue(theme.styles.values.allSatisfy { $0.foreground == .terminalDefault && $0.background == .terminalDefault })
        XCTAssertEqual(theme.style(.selected).attributes, [.reverse])
        XCTAssertTrue(theme.style(.statusChanged).attributes.contains(.bold))
    }

    func testWithoutColourChangedAndRevokedHostsStandOutInReverseVideoAsInTheMonochromeTheme() throws {
        let monochrome = try Theme.load("monochrome", searching: [ThemeTests.themesDirectory])
        for name in ["default", "light", "high-contrast", "monochrome"] {
            let theme = try Theme.load(name, searching: [ThemeTests.themesDirectory]).withoutColor
            for role in [StyleRole.statusChanged, .statusRevoked] {
                XCTAssertTrue(theme.style(role).attributes.isSuperset(of: monochrome.style(role).attributes), "\(name) \(role)")
                XCTAssertNotEqual(theme.style(role), theme.style(.statusNew), "\(name) \(role)")
                XCTAssertNotEqual(theme.style(role), theme.style(.statusPinMismatch), "\(name) \(role)")
            }
        }
    }

    func testThemesAreFoundNextToTheExecutableAndThroughTheEnvironment() {
        let directories = Theme.searchDirectories(executable: "/opt/x/.build/debug/fleettrust", environment: ["FLEETTRUST_THEMES": "/custom"])
        XCTAssertEqual(directories.first, "/custom")
        XCTAssertTrue(directories.contains("/opt/x/themes"))
    }

    func testAnInstalledBinaryLooksInItsPrefixsShareDirectoryFirst() {
        let directories = Theme.searchDirectories(executable: "/tmp/stage/usr/local/bin/fleettrust", environment: [:])
        XCTAssertEqual(directories.first, "/tmp/stage/usr/local/share/fleettrust/themes")
    }

    func testWindowsLineEndingsAreReadLineByLine() throws {
        let theme = try Theme.parse("# comment\r\nheader = red, blue, bold\r\nselected = black, white\r\n", name: "crlf", file: "crlf.theme")
        XCTAssertEqual(theme.styles[.header]?.foreground, .indexed(1))
        XCTAssertNotNil(theme.styles[.selected])
    }
}
