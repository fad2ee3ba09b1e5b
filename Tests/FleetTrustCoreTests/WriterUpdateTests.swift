import Foundation
import XCTest
@testable import FleetTrustCore

/// The dashboard's one-edit-per-host write: exact removals, hashed names, compare-and-set.
final class WriterUpdateTests: XCTestCase {
    private let old = try! HostKey(openSSHLine: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl")
    private let rsaLine = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKSpBynbNAPWnDyiJ5sGiFnj1vRavh0QglSYbgbWNIYQ"
    private var path = ""

    override func setUp() {
        path = NSTemporaryDirectory() + "/writer-update-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    }

    override func tearDown() { unlink(path) }

    private func contents() throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    func testReplaceRemovesExactlyTheOldKeyForExactlyThatNameInOneEdit() throws {
        let new = try HostKey(openSSHLine: rsaLine)
        let original = "# keep me\n[web]:2222,other \(old.openSSHLine)\n[web]:2222 ecdsa-sha2-nistp256 AAAA-not-parsed\nzzz \(old.openSSHLine)\n"
        try original.write(toFile: path, atomically: true, encoding: .utf8)
        let writer = KnownHostsWriter(path: path, hashNames: false)
        let seen = KnownHostsWriter.recordedFingerprints(["[web]:2222"], in: try KnownHostsFile.read(path: path))
        XCTAssertEqual(seen, [old.sha256Fingerprint])
        try writer.update(names: ["[web]:2222"], removing: [old.sha256Fingerprint], adding: [new], expecting: seen)
        XCTAssertEqual(try contents(), "# keep me\nother \(old.openSSHLine)\n[web]:2222 ecdsa-sha2-nistp256 AAAA-not-parsed\nzzz \(old.openSSHLine)\n[web]:2222 \(new.openSSHLine)\n")
    }

    func testAChangeForTheHostSinceTheDecisionIsRefusedAndNothingIsWritten() throws {
        try "web \(old.openSSHLine)\n".write(toFile: path, atomically: true, encoding: .utf8)
        let seen = KnownHostsWriter.recordedFingerprints(["web"], in: try KnownHostsFile.read(path: path))
        try "web \(old.openSSHLine)\nweb \(rsaLine)\n".write(toFile: path, atomically: true, encoding: .utf8)
        let writer = KnownHostsWriter(path: path, hashNames: false)
        XCTAssertThrowsError(try writer.update(names: ["web"], removing: [old.sha256Fingerprint],
                                               adding: [try HostKey(openSSHLine: rsaLine)], expecting: seen)) { error in
            XCTAssertEqual(error as? KnownHostsWriter.Refusal, .concurrentChange(path: path))
        }
        XCTAssertEqual(try contents(), "web \(old.openSSHLine)\nweb \(rsaLine)\n")
        try "unrelated \(rsaLine)\n".write(toFile: path, atomically: true, encoding: .utf8)
        try writer.update(names: ["web"], removing: [], adding: [old], expecting: [])
        XCTAssertEqual(try contents(), "unrelated \(rsaLine)\nweb \(old.openSSHLine)\n", "an unrelated line does not block a save")
    }

    func testHashedNamesAreWrittenWhenAskedAndFoundAsSshWouldLookThemUp() throws {
        let writer = KnownHostsWriter(path: path, hashNames: true)
        try writer.update(names: ["[Web.Example]:2222"], removing: [], adding: [old], expecting: nil)
        let text = try contents()
        XCTAssertTrue(text.hasPrefix("|1|"), text)
        XCTAssertFalse(text.lowercased().contains("web.example"), "a hashed entry never spells the name")
        let file = try KnownHostsFile.read(path: path)
        XCTAssertEqual(file.matchingLines("[web.example]:2222").count, 1)
        let oracle = try runTool("/usr/bin/ssh-keygen", ["-F", "[web.example]:2222", "-f", path])
        XCTAssertTrue(oracle.contains(old.base64), oracle)
    }
}
