import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import FleetTrustCore

/// A symbolic link another user planted in a shared directory (`/tmp`: sticky, world-writable)
/// must not steer a file fleettrust replaces (`--output`, the history, known_hosts) to a file of
/// the scanning user's: the kernel's `protected_symlinks` refuses such a link to `open` (so a
/// shell redirection fails), and fleettrust follows links itself, in user space.
final class SharedDirectorySymlinkTests: XCTestCase {
    var dir: StoreTestDirectory!
    override func setUpWithError() throws {
        guard geteuid() == 0 else { throw XCTSkip("planting another user's link needs root (lchown)") }
        dir = try StoreTestDirectory()
    }
    override func tearDown() { dir?.remove() }

    private func plant(_ link: String, in directory: String, to target: String, owner: uid_t) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        XCTAssertEqual(symlink(target, directory + "/" + link), 0)
        XCTAssertEqual(lchown(directory + "/" + link, owner, owner), 0)
    }

    func testAnotherUsersLinkInAStickyWorldWritableDirectoryIsNotFollowed() throws {
        try dir.write("victim", "the user's own file\n")
        let shared = dir.file("shared")
        try plant("report.json", in: shared, to: dir.file("victim"), owner: 12_345)
        XCTAssertEqual(chmod(shared, 0o1777), 0)

        XCTAssertThrowsError(try ReplacedFile(path: shared + "/report.json")) { error in
            XCTAssertEqual(error as? StoreError, .untrustedSymlink(path: shared + "/report.json", link: shared + "/report.json"))
        }
        XCTAssertEqual(dir.text("victim"), "the user's own file\n")
        XCTAssertEqual(dir.entries(), ["shared", "victim"], "no temporary file beside the target")
        XCTAssertThrowsError(try HistoryStore.open(path: shared + "/report.json", readOnly: false))
        XCTAssertEqual(dir.text("victim"), "the user's own file\n")
        let record = AuditEvent(time: Date(), user: "u", action: .synced(proof: "pin", file: "kh"), host: nil, outcome: .written).record
        XCTAssertThrowsError(try AuditLog(path: shared + "/report.json").append([record])) { error in
            XCTAssertEqual(error as? StoreError, .untrustedSymlink(path: shared + "/report.json", link: shared + "/report.json"))
        }
        XCTAssertEqual(dir.text("victim"), "the user's own file\n", "the audit log follows the same rule")
    }

    func testOwnLinksAndLinksOutsideSharedDirectoriesAreStillWrittenThrough() throws {
        try dir.write("victim", "old\n")
        let shared = dir.file("shared")
        try plant("mine.json", in: shared, to: dir.file("victim"), owner: geteuid())
        XCTAssertEqual(chmod(shared, 0o1777), 0)
        let own = try ReplacedFile(path: shared + "/mine.json")
        own.abandon()
        XCTAssertEqual(own.resolvedPath, dir.file("victim"))
        let record = AuditEvent(time: Date(), user: "u", action: .synced(proof: "pin", file: "kh"), host: nil, outcome: .written).record
        try AuditLog(path: shared + "/mine.json").append([record])
        XCTAssertTrue(dir.text("victim").hasPrefix("old\n{"), "an own link is written through")

        let private_ = dir.file("private")
        try plant("theirs.json", in: private_, to: dir.file("victim"), owner: 12_345)
        XCTAssertEqual(chmod(private_, 0o755), 0)
        let theirs = try ReplacedFile(path: private_ + "/theirs.json")
        theirs.abandon()
        XCTAssertEqual(theirs.resolvedPath, dir.file("victim"), "not a shared directory: the link is the user's choice")
    }
}
