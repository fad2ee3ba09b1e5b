import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif
import FleetTrustCore
import FleetTrustTestFleet

/// Saving into a user's file under every fault we can make real here: each gives one clear
/// sentence, leaves the original byte for byte, and leaves no temporary file behind.
final class StoreFaultTests: XCTestCase {
    var scratch: StoreFaultScratch!
    static let original = "# keep me\r\nold.example ssh-ed25519 AAAA\nno newline at end"

    override func setUpWithError() throws { scratch = try StoreFaultScratch() }
    override func tearDown() { scratch.remove() }

    func save(_ path: String, _ line: String = "new.example ssh-ed25519 AAAA") throws {
        let file = GuardedFile(path: path)
        try file.update(from: file.read()) { _, current in current + Array(("\n" + line).utf8) }
    }

    func assertIntact(_ name: String = "known_hosts", entries: [String] = ["known_hosts"], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(scratch.text(name), Self.original, file: file, line: line)
        XCTAssertEqual(scratch.entries(), entries, "temporary file left behind", file: file, line: line)
    }

    func testModeAndOwnerAreKept() throws {
        try scratch.write("known_hosts", Self.original)
        XCTAssertEqual(chown(scratch.file("known_hosts"), 1234, 1234), 0)
        XCTAssertEqual(chmod(scratch.file("known_hosts"), 0o640), 0)
        let inode = scratch.status("known_hosts").st_ino
        try save(scratch.file("known_hosts"))
        let after = scratch.status("known_hosts")
        XCTAssertNotEqual(after.st_ino, inode)
        XCTAssertEqual([after.st_uid, after.st_gid], [1234, 1234])
        XCTAssertEqual(after.st_mode & 0o7777, 0o640)
        XCTAssertEqual(scratch.text("known_hosts"), Self.original + "\nnew.example ssh-ed25519 AAAA")
    }

    func testSymlinkIsWrittenThroughToItsTargetAndTheLinkKept() throws {
        try FileManager.default.createDirectory(atPath: scratch.file(".ssh"), withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: scratch.file("dotfiles"), withIntermediateDirectories: false)
        try scratch.write("dotfiles/known_hosts", Self.original)
        XCTAssertEqual(symlink("../dotfiles/known_hosts", scratch.file(".ssh/known_hosts")), 0)
        XCTAssertEqual(symlink("known_hosts", scratch.file(".ssh/kh-link")), 0)
        try save(scratch.file(".ssh/kh-link"))
        XCTAssertEqual(scratch.status(".ssh/known_hosts").st_mode & S_IFMT, S_IFLNK)
        XCTAssertEqual(scratch.status(".ssh/kh-link").st_mode & S_IFMT, S_IFLNK)
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: scratch.file(".ssh/known_hosts")), "../dotfiles/known_hosts")
        XCTAssertEqual(scratch.text("dotfiles/known_hosts"), Self.original + "\nnew.example ssh-ed25519 AAAA")
        XCTAssertEqual(scratch.entries("dotfiles"), ["known_hosts"])
        XCTAssertEqual(scratch.entries(".ssh"), ["kh-link", "known_hosts"])
    }

    func testDanglingSymlinkCreatesItsTarget() throws {
        XCTAssertEqual(symlink("real_known_hosts", scratch.file("known_hosts")), 0)
        try save(scratch.file("known_hosts"))
        XCTAssertEqual(scratch.status("known_hosts").st_mode & S_IFMT, S_IFLNK)
        XCTAssertEqual(scratch.text("real_known_hosts"), "\nnew.example ssh-ed25519 AAAA")
    }

    /// A known_hosts that does not exist yet gets the mode the real `ssh` would give it.
    func testNewFileGetsTheModeSshGivesItUnderTheUmask() throws {
        let fleet = try TestFleet.start(hosts: 1)
        defer { fleet.stop() }
        let host = fleet.hosts[0]
        for mask in ["022", "027", "077"] {
            let ours = scratch.file("ours-\(mask)"), theirs = scratch.file("ssh-\(mask)")
            let stress = BuiltProducts.directory + "/store-stress"
            let run = try ProgramRun.run("/bin/sh", ["-c", "umask \(mask) && exec \"$0\" lines \"$1\" x 1", stress, ours])
            XCTAssertEqual(run.status, 0, run.stderrText)
            _ = try ProgramRun.run("/bin/sh", ["-c", "umask \(mask) && exec /usr/bin/ssh \"$@\"", "sh", "-F", "/dev/null",
                                               "-o", "StrictHostKeyChecking=accept-new", "-o", "BatchMode=yes",
                                               "-o", "UserKnownHostsFile=\(theirs)", "-o", "GlobalKnownHostsFile=/dev/null",
                                               "-o", "PubkeyAuthentication=no", "-o", "PasswordAuthentication=no",
                                               "-p", String(host.port), "nobody@\(host.address)", "true"], limit: 60)
            XCTAssertTrue(FileManager.default.fileExists(atPath: theirs), "ssh wrote no known_hosts")
            XCTAssertEqual(scratch.status("ours-\(mask)").st_mode & 0o7777, scratch.status("ssh-\(mask)").st_mode & 0o7777, mask)
        }
    }

    func testSymlinkLoopIsReported() throws {
        XCTAssertEqual(symlink("b", scratch.file("a")), 0)
        XCTAssertEqual(symlink("a", scratch.file("b")), 0)
        XCTAssertThrowsError(try save(scratch.file("a"))) {
            XCTAssertEqual("\($0)", "\(scratch.file("a")): too many levels of symbolic links.")
        }
    }

    func testReadOnlyFileIsRefusedAndKept() throws {
        try scratch.write("known_hosts", Self.original)
        XCTAssertEqual(chmod(scratch.file("known_hosts"), 0o444), 0)
        XCTAssertThrowsError(try save(scratch.file("known_hosts"))) {
            XCTAssertEqual("\($0)", "\(scratch.file("known_hosts")) is read-only; nothing was changed.")
        }
        assertIntact()
    }

    /// The known_hosts and pin writers save through the same guarded path, with the same errors.
    func testKnownHostsAndPinWritersGiveTheSameClearErrors() throws {
        try scratch.write("known_hosts", Self.original)
        XCTAssertEqual(chmod(scratch.file("known_hosts"), 0o444), 0)
        let key = try HostKey(openSSHLine: StoreFaultScratch.sampleKeyLine)
        XCTAssertThrowsError(try KnownHostsWriter(path: scratch.file("known_hosts"), hashNames: false).add(key, for: ["web"])) {
            XCTAssertEqual($0 as? StoreError, .readOnly(path: scratch.file("known_hosts")))
        }
        XCTAssertThrowsError(try PinFileWriter(path: scratch.file("known_hosts")).addPin(patterns: "web", fingerprints: [key.sha256Fingerprint])) {
            XCTAssertEqual($0 as? StoreError, .readOnly(path: scratch.file("known_hosts")))
        }
        assertIntact()
        XCTAssertThrowsError(try KnownHostsWriter(path: scratch.file("a/b/known_hosts"), hashNames: false).add(key, for: ["web"])) {
            XCTAssertEqual("\($0)", "directory \(scratch.file("a")) does not exist; create it first.")
        }
    }

    func testImmutableFileIsRefusedAndKept() throws {
        try scratch.write("known_hosts", Self.original)
        try Tool.check("/usr/bin/chattr", ["+i", scratch.file("known_hosts")])
        XCTAssertThrowsError(try save(scratch.file("known_hosts"))) {
            XCTAssertEqual($0 as? StoreError, .readOnly(path: scratch.file("known_hosts")))
        }
        try Tool.check("/usr/bin/chattr", ["-i", scratch.file("known_hosts")])
        assertIntact()
    }

    func testReadOnlyFileSystemIsRefusedAndKept() throws {
        try scratch.write("known_hosts", Self.original)
        let mount = try Tool.run("/usr/bin/mount", ["--bind", scratch.path, scratch.path])
        try XCTSkipIf(mount.status != 0, "bind mount not permitted here: \(mount.stderr)")
        defer { _ = try? Tool.run("/usr/bin/umount", [scratch.path]) }
        try Tool.check("/usr/bin/mount", ["-o", "remount,ro,bind", scratch.path])
        XCTAssertThrowsError(try save(scratch.file("known_hosts"))) {
            XCTAssertEqual("\($0)", "\(scratch.file("known_hosts")) is read-only; nothing was changed.")
        }
        assertIntact()
    }

    func testReadOnlyDirectoryIsRefusedForAnOrdinaryUser() throws {
        try FileManager.default.createDirectory(atPath: scratch.file("home"), withIntermediateDirectories: false)
        try scratch.write("home/known_hosts", Self.original)
        XCTAssertEqual(chown(scratch.file("home/known_hosts"), 1234, 1234), 0)
        XCTAssertEqual(chown(scratch.file("home"), 1234, 1234), 0)
        XCTAssertEqual(chmod(scratch.file("home"), 0o555), 0)
        let run = try StoreFaultScratch.runAsOtherUser(["lines", scratch.file("home/known_hosts"), "x", "1"])
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.stderrText, "store-stress: cannot write in \(scratch.file("home")) (read-only directory); nothing was changed.\n")
        XCTAssertEqual(scratch.text("home/known_hosts"), Self.original)
        XCTAssertEqual(scratch.entries("home"), ["known_hosts"])
    }

    func testOtherUsersFileIsPermissionDenied() throws {
        try scratch.write("known_hosts", Self.original)
        XCTAssertEqual(chmod(scratch.file("known_hosts"), 0o644), 0)
        let run = try StoreFaultScratch.runAsOtherUser(["lines", scratch.file("known_hosts"), "x", "1"])
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.stderrText, "store-stress: permission denied writing \(scratch.file("known_hosts")); nothing was changed.\n")
        assertIntact()
    }

    func testFullDiskGivesNoSpaceAndKeepsTheOriginal() throws {
        try FileManager.default.createDirectory(atPath: scratch.file("small"), withIntermediateDirectories: false)
        let mount = try Tool.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", scratch.file("small")])
        try XCTSkipIf(mount.status != 0, "tmpfs mount not permitted here: \(mount.stderr)")
        defer { _ = try? Tool.run("/usr/bin/umount", [scratch.file("small")]) }
        let original = String(repeating: "big.example ssh-ed25519 AAAA\n", count: 700)
        try scratch.write("small/known_hosts", original)
        fill(scratch.file("small/filler"))
        XCTAssertThrowsError(try save(scratch.file("small/known_hosts"))) {
            XCTAssertEqual("\($0)", "no space left to save \(scratch.file("small/known_hosts")); the original is intact.")
        }
        XCTAssertEqual(scratch.text("small/known_hosts"), original)
        XCTAssertEqual(scratch.entries("small"), ["filler", "known_hosts"])
    }

    /// Writes until the file system is full.
    func fill(_ path: String) {
        let fd = open(path, O_WRONLY | O_CREAT, 0o600)
        defer { close(fd) }
        let block = [UInt8](repeating: 0x41, count: 1024)
        while block.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        let byte: [UInt8] = [0x41]
        while byte.withUnsafeBytes({ write(fd, $0.baseAddress, 1) }) > 0 {}
    }
}
