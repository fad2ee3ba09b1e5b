import FleetTrustDashboard
import Foundation
import XCTest

/// Replays every theme the `fuzz-themes` target found hostile (saved under
/// Tests/FuzzCorpus/regressions/fuzz-themes) through `Theme.load`, the path `--theme` takes.
final class ThemeFuzzRegressionTests: XCTestCase {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("FuzzCorpus/regressions/fuzz-themes")

    func testHostileThemeFilesAreRefusedWithACleanShortSentence() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.directory.path).sorted()
        XCTAssertFalse(names.isEmpty)
        for name in names {
            let path = Self.directory.appendingPathComponent(name).path
            XCTAssertThrowsError(try Theme.load(path, searching: []), name) { error in
                guard let error = error as? ThemeError else { return XCTFail("\(name): \(error)") }
                XCTAssertEqual(error.line, 1, name)
                XCTAssertFalse(error.description.unicodeScalars.contains { $0.properties.generalCategory == .control }, name)
                XCTAssertLessThan(error.message.utf8.count, 1024, name)
            }
        }
    }

    func testAnEscapeSequenceInAColourIsQuotedCleaned() {
        let path = Self.directory.appendingPathComponent("osc52-in-colour.theme").path
        XCTAssertThrowsError(try Theme.load(path, searching: [])) {
            XCTAssertEqual(($0 as? ThemeError)?.message, "unknown colour '?]52;c;aGVsbG8=??[2J'")
        }
    }
}
