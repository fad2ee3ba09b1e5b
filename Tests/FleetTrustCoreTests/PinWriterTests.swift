import Foundation
import XCTest
@testable import FleetTrustCore

/// Adding pins keeps every other byte of the pin file.
final class PinWriterTests: XCTestCase {
    var dir: StoreTestDirectory!
    static let a = try! PinFingerprint.parse(PinFileTests.a).get(), b = try! PinFingerprint.parse(PinFileTests.b).get()

    override func setUpWithError() throws { dir = try StoreTestDirectory() }
    override func tearDown() { dir.remove() }

    func testNewHostIsAppendedAndEveryOtherByteKept() throws {
        let original = "# pins\r\nweb1 \(Self.a.text)\r\n\tjunk line\nno-newline \(Self.b.text)"
        try dir.write("pins", original)
        try PinWriter(path: dir.file("pins")).add([Self.a, Self.b, Self.a], forPatterns: "[db]:2222")
        XCTAssertEqual(dir.text("pins"), original + "\n[db]:2222 \(Self.a.text) \(Self.b.text)\n")
    }

    func testExistingLineForTheSamePatternsIsExtendedInPlace() throws {
        let original = "# pins\nweb1,web2\t\(Self.a.text)   expires=2027-01-01 \r\nweb1 other\n"
        try dir.write("pins", original)
        try PinWriter(path: dir.file("pins")).add([Self.b], forPatterns: "web1,web2")
        XCTAssertEqual(dir.text("pins"), "# pins\nweb1,web2\t\(Self.a.text) \(Self.b.text)   expires=2027-01-01 \r\nweb1 other\n")
    }

    func testAlreadyPinnedKeyChangesNothing() throws {
        try dir.write("pins", "web1 \(Self.a.text)\n")
        let inode = dir.status("pins").st_ino
        try PinWriter(path: dir.file("pins")).add([Self.a], forPatterns: "web1")
        XCTAssertEqual(dir.status("pins").st_ino, inode)
    }

    func testWrittenPinsReadBackAndMatch() throws {
        try PinWriter(path: dir.file("pins")).add([Self.b], forPatterns: "h1")
        try PinWriter(path: dir.file("pins")).add([Self.a], forPatterns: "h1")
        let file = try PinFile.load(path: dir.file("pins"))
        XCTAssertEqual(file.errors, [])
        XCTAssertEqual(file.pins.map(\.fingerprints), [[Self.b, Self.a]])
        XCTAssertEqual(PinSet(files: [file]).judge(names: ["h1"], fingerprints: [Self.a.text], now: Date()).verdict, .matched)
    }

    func testPatternsWithSpacesAreRefused() {
        for patterns in ["", "a b", "#x", "a\nb"] {
            XCTAssertThrowsError(try PinWriter(path: dir.file("pins")).add([Self.a], forPatterns: patterns))
        }
        XCTAssertEqual(dir.entries(), [])
    }

    func testLoadingAMissingPinFileSaysSo() {
        XCTAssertThrowsError(try PinFile.load(path: dir.file("nope"))) {
            XCTAssertEqual("\($0)", "\(dir.file("nope")) does not exist.")
        }
    }
}
