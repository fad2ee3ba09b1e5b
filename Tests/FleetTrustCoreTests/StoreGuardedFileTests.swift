import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import FleetTrustCore
import FleetTrustTestFleet

/// GuardedFile on real files: bytes kept, compare-and-set, the late-append race, errors.
final class StoreGuardedFileTests: XCTestCase {
    var dir: StoreTestDirectory!

    override func setUpWithError() throws { dir = try StoreTestDirectory() }
    override func tearDown() { dir.remove() }

    static let awkward = "# comment\r\nhost1 ssh-ed25519 AAAA\r\n\n   \t  odd  whitespace\t\n|1|bad|hashed\nnot a valid line at all\n\u{1}\u{7f}\u{fe}\nlast line without newline"

    func testAWriterHoldingTheLockMakesTheWriteGiveUpInBoundedTimeAndChangeNothing() throws {
        try dir.write("known_hosts", "host1 ssh-ed25519 AAAA\n")
        // A real other process holds the lock our writer takes on the directory: util-linux flock
        // locks the shell's descriptor and exits, and the shell becomes `sleep`, one process that
        // keeps the lock until it is stopped by its PID; it says on stderr once it holds the lock.
        let said = dir.file("holder.log")
        let holder = try SpawnedProcess("/bin/sh", ["-c", "exec 9<\"$0\" && /usr/bin/flock -x 9 && echo held >&2 && exec sleep 30", dir.path],
                                        stderrPath: said)
        defer { holder.terminate() }
        let deadline = Date().addingTimeInterval(10)
        while (try? String(contentsOfFile: said, encoding: .utf8)) != "held\n" && holder.isRunning && Date() < deadline { usleep(10_000) }
        XCTAssertEqual(try String(contentsOfFile: said, encoding: .utf8), "held\n")
        XCTAssertTrue(holder.isRunning)
        var file = GuardedFile(path: dir.file("known_hosts"))
        file.lockWait = .milliseconds(500)
        let started = ContinuousClock.now
        XCTAssertThrowsError(try file.update { $0 + Array("host2 ssh-ed25519 BBBB\n".utf8) }) { error in
            XCTAssertEqual(error as? StoreError, .lockTimeout(path: dir.file("known_hosts"), seconds: 0))
        }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5), "the wait is bounded")
        XCTAssertEqual(dir.text("known_hosts"), "host1 ssh-ed25519 AAAA\n", "nothing was written")
    }

    func appending(_ line: String) -> GuardedFile.Transform {
        { _, current in
            var bytes = current
            if let last = bytes.last, last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
            return bytes + Array((line + "\n").utf8)
        }
    }

    func testUnrelatedBytesSurviveByteForByte() throws {
        try dir.write("known_hosts", Self.awkward)
        let file = GuardedFile(path: dir.file("known_hosts"))
        try file.update(from: file.read(), appending("new.example ssh-ed25519 AAAA"))
        XCTAssertEqual(dir.text("known_hosts"), Self.awkward + "\nnew.example ssh-ed25519 AAAA\n")
        XCTAssertEqual(dir.entries(), ["known_hosts"])
    }

    func testSnapshotCarriesIdentityAndDigest() throws {
        try dir.write("f", "abc\n")
        let snapshot = try GuardedFile(path: dir.file("f")).read()
        let s = dir.status("f")
        XCTAssertEqual(snapshot.identity?.inode, UInt64(s.st_ino))
        XCTAssertEqual(snapshot.identity?.size, 4)
        XCTAssertEqual(snapshot.sha256, Digest.sha256(Array("abc\n".utf8)))
        XCTAssertFalse(try GuardedFile(path: dir.file("missing")).read().exists)
    }

    func testWriteReplacesTheFileByRename() throws {
        try dir.write("f", "a\n")
        let before = dir.status("f").st_ino
        let file = GuardedFile(path: dir.file("f"))
        let saved = try file.update(from: file.read(), appending("b"))
        XCTAssertNotEqual(dir.status("f").st_ino, before)
        XCTAssertEqual(saved.bytes, Array("a\nb\n".utf8))
    }

    func testUnchangedContentWritesNothing() throws {
        try dir.write("f", "a\n")
        let before = dir.status("f").st_ino
        let file = GuardedFile(path: dir.file("f"))
        try file.update(from: file.read()) { _, current in current }
        XCTAssertEqual(dir.status("f").st_ino, before)
    }

    func testMissingFileIsCreatedWith0666MinusTheUmask() throws {
        let mask = umask(0o022)
        umask(mask)
        let file = GuardedFile(path: dir.file("new_hosts"))
        try file.update(from: file.read(), appending("h ssh-ed25519 AAAA"))
        XCTAssertEqual(dir.text("new_hosts"), "h ssh-ed25519 AAAA\n")
        XCTAssertEqual(dir.status("new_hosts").st_mode & 0o7777, 0o666 & ~mask)
    }

    func testMissingSSHDirectoryIsCreatedWith0700() throws {
        let file = GuardedFile(path: dir.file(".ssh/known_hosts"))
        try file.update(from: file.read(), appending("h ssh-ed25519 AAAA"))
        XCTAssertEqual(dir.status(".ssh").st_mode & 0o7777, 0o700)
        XCTAssertEqual(dir.text(".ssh/known_hosts"), "h ssh-ed25519 AAAA\n")
    }

    func testMoreThanOneMissingDirectoryIsReportedNotCreated() throws {
        let file = GuardedFile(path: dir.file("a/b/known_hosts"))
        XCTAssertThrowsError(try file.update(from: file.read(), appending("x"))) { error in
            XCTAssertEqual(error as? StoreError, .missingDirectory(path: dir.file("a")))
            XCTAssertEqual("\(error)", "directory \(dir.file("a")) does not exist; create it first.")
        }
        XCTAssertEqual(dir.entries(), [])
    }

    func testDirectoryOrFifoIsNotARegularFile() throws {
        try FileManager.default.createDirectory(atPath: dir.file("d"), withIntermediateDirectories: false)
        XCTAssertEqual(mkfifo(dir.file("p"), 0o600), 0)
        for name in ["d", "p"] {
            let file = GuardedFile(path: dir.file(name))
            XCTAssertThrowsError(try file.read()) { XCTAssertEqual($0 as? StoreError, .notRegularFile(path: dir.file(name))) }
        }
    }

    func testChangeToTheSameHostSinceReadingIsRefused() throws {
        try dir.write("known_hosts", "# mine\nother ssh-ed25519 AAAA\n")
        let file = GuardedFile(path: dir.file("known_hosts"))
        let planned = try file.read()
        let rival = GuardedFile(path: dir.file("known_hosts"))
        try rival.update(from: rival.read(), appending("web1 ssh-rsa AAAB"))
        XCTAssertThrowsError(try file.update(from: planned, Self.compareAndSetAppend(host: "web1", line: "web1 ssh-ed25519 AAAA"))) {
            guard case .conflict? = $0 as? StoreError else { return XCTFail("\($0)") }
        }
        XCTAssertEqual(dir.text("known_hosts"), "# mine\nother ssh-ed25519 AAAA\nweb1 ssh-rsa AAAB\n")
        XCTAssertEqual(dir.entries(), ["known_hosts"])
    }

    func testUnrelatedAppendSinceReadingIsKept() throws {
        try dir.write("known_hosts", "other ssh-ed25519 AAAA\n")
        let file = GuardedFile(path: dir.file("known_hosts"))
        let planned = try file.read()
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: dir.file("known_hosts")))
        handle.seekToEndOfFile()
        handle.write(Data("ssh-appended ssh-ed25519 AAAA\n".utf8))
        try handle.close()
        try file.update(from: planned, Self.compareAndSetAppend(host: "web1", line: "web1 ssh-ed25519 AAAA"))
        XCTAssertEqual(dir.text("known_hosts"), "other ssh-ed25519 AAAA\nssh-appended ssh-ed25519 AAAA\nweb1 ssh-ed25519 AAAA\n")
    }

    /// `ssh` opens the old file just before our rename and writes after it: the line lands in
    /// the replaced inode. The writer must notice (it waits for the writer to close) and merge it.
    func testLineAppendedToTheReplacedFileAfterRenameIsMergedIn() throws {
        try dir.write("known_hosts", "first ssh-ed25519 AAAA\n")
        let file = GuardedFile(path: dir.file("known_hosts"))
        nonisolated(unsafe) var lateFD: Int32 = -1
        let done = DispatchSemaphore(value: 0)
        try file.update(from: file.read()) { planned, current in
            if lateFD < 0 {
                lateFD = open(self.dir.file("known_hosts"), O_WRONLY | O_APPEND)
                Self.appendAfterRename(fd: lateFD, path: self.dir.file("known_hosts"), line: "late ssh-ed25519 AAAA\n", done: done)
            }
            return try Self.compareAndSetAppend(host: "mine", line: "mine ssh-ed25519 AAAA")(planned, current)
        }
        done.wait()
        XCTAssertEqual(dir.text("known_hosts"), "first ssh-ed25519 AAAA\nlate ssh-ed25519 AAAA\nmine ssh-ed25519 AAAA\n")
        XCTAssertEqual(dir.entries(), ["known_hosts"])
    }

    func testLateLineForTheSameHostWithdrawsOurWriteAndIsReported() throws {
        try dir.write("known_hosts", "first ssh-ed25519 AAAA\n")
        let file = GuardedFile(path: dir.file("known_hosts"))
        nonisolated(unsafe) var lateFD: Int32 = -1
        XCTAssertThrowsError(try file.update(from: file.read()) { planned, current in
            if lateFD < 0 {
                lateFD = open(self.dir.file("known_hosts"), O_WRONLY | O_APPEND)
                Self.appendAfterRename(fd: lateFD, path: self.dir.file("known_hosts"), line: "mine ssh-rsa AAAB\n", done: nil)
            }
            return try Self.compareAndSetAppend(host: "mine", line: "mine ssh-ed25519 AAAA")(planned, current)
        }) { guard case .conflict? = $0 as? StoreError else { return XCTFail("\($0)") } }
        XCTAssertEqual(dir.text("known_hosts"), "first ssh-ed25519 AAAA\nmine ssh-rsa AAAB\n")
    }

    /// As `ssh` would if it opened the file just before our rename: waits until the path
    /// names another inode, then (after a pause, so that the writer has read the old inode
    /// once already) appends through the descriptor opened on the old one.
    static func appendAfterRename(fd: Int32, path: String, line: String, done: DispatchSemaphore?) {
        Thread.detachNewThread {
            var opened = stat(), now = stat()
            fstat(fd, &opened)
            while stat(path, &now) == 0, now.st_ino == opened.st_ino { usleep(200) }
            usleep(50_000)
            let bytes = Array(line.utf8)
            _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
            done?.signal()
        }
    }

    func testFileCreatedBySomeoneElseMeanwhileIsMergedNotReplaced() throws {
        let file = GuardedFile(path: dir.file("known_hosts"))
        let planned = try file.read()
        XCTAssertFalse(planned.exists)
        nonisolated(unsafe) var calls = 0
        try file.update(from: planned) { planned, current in
            calls += 1
            if calls == 1 { try self.dir.write("known_hosts", "ssh-created ssh-ed25519 AAAA\n") }
            return try Self.compareAndSetAppend(host: "mine", line: "mine ssh-ed25519 AAAA")(planned, current)
        }
        XCTAssertEqual(calls, 2)
        XCTAssertEqual(dir.text("known_hosts"), "ssh-created ssh-ed25519 AAAA\nmine ssh-ed25519 AAAA\n")
        XCTAssertEqual(dir.entries(), ["known_hosts"])
    }

    /// Adds `line` unless a line for `host` was added or removed since the snapshot.
    static func compareAndSetAppend(host: String, line: String) -> GuardedFile.Transform {
        { planned, current in
            func lines(_ bytes: [UInt8]) -> Set<String> {
                Set(String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init))
            }
            let changed = lines(planned.bytes).symmetricDifference(lines(current))
            if changed.contains(where: { $0.hasPrefix(host + " ") }) {
                throw StoreError.conflict(path: planned.path, detail: "\(host) was changed by someone else")
            }
            var bytes = current
            if let last = bytes.last, last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
            return bytes + Array((line + "\n").utf8)
        }
    }
}
