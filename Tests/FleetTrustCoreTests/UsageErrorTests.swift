import Foundation
import XCTest
@testable import FleetTrustCore

/// The usage-error sentences: a mistyped option is named with the closest known one, from the
/// command's own help description, before anything else is said.
final class UsageErrorTests: XCTestCase {
    /// A help description of the shape swift-argument-parser's `_dumpHelp()` writes.
    private let dump = Data("""
        {"command": {"commandName": "fleettrust", "defaultSubcommand": "dashboard", "subcommands": [
          {"commandName": "dashboard", "arguments": [{"names": [{"kind": "long", "name": "inventory"}]}]},
          {"commandName": "scan", "arguments": [{"names": [{"kind": "long", "name": "inventory"}, {"kind": "short", "name": "i"}]},
                                                 {"names": [{"kind": "long", "name": "format"}]}]}]}}
        """.utf8)

    func testAMistypedOptionOfTheNamedCommandIsNamedWithTheClosestKnownOne() {
        XCTAssertEqual(MistypedOption.problem(in: ["scan", "--invntory", "x"], helpDump: dump),
                       "Unknown option '--invntory'. Did you mean '--inventory'?")
        XCTAssertEqual(MistypedOption.problem(in: ["scan", "--frmat=json"], helpDump: dump),
                       "Unknown option '--frmat'. Did you mean '--format'?")
    }

    func testTheDefaultSubcommandsOptionsApplyWithoutACommandWord() {
        XCTAssertNil(MistypedOption.problem(in: ["--inventory", "hosts"], helpDump: dump))
        XCTAssertEqual(MistypedOption.problem(in: ["--format", "json"], helpDump: dump), "Unknown option '--format'")
    }

    func testNothingAfterTheDoubleDashAndNoControlBytesAreEchoed() {
        XCTAssertNil(MistypedOption.problem(in: ["scan", "--", "--invntory"], helpDump: dump))
        let echoed = MistypedOption.problem(in: ["scan", "--\u{1b}[2Jx"], helpDump: dump) ?? ""
        XCTAssertFalse(echoed.unicodeScalars.contains { $0.value == 0x1b }, echoed)
    }

    func testTheHintPointsAtTheCommandsOwnHelp() {
        XCTAssertEqual(UsageHint.from("Error: bad\nUsage: fleettrust scan\n  See 'fleettrust scan --help' for more information."),
                       " (see 'fleettrust scan --help')")
        XCTAssertEqual(UsageHint.from("Error: bad"), " (see 'fleettrust --help')")
        XCTAssertEqual("  a b \n".trimmingWhitespaceOnBothSides(), "a b")
    }
}
