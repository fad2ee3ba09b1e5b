import Foundation
import XCTest
import FleetTrustTestFleet
@testable import FleetTrustCore

final class WriterTests: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ft-writer-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: directory) }

    func bytes(_ path: String) -> [UInt8] { [UInt8](FileManager.default.contents(atPath: path) ?? Data()) }

    func testUnrelatedBytesSurviveByteForByte() throws {
        let path = directory.appendingPathComponent("known_hosts").path
        let hashed = try HashedHostName(hashing: "other").field
        let original = "# team hosts\r\n\n  other,web \(TestKeys.b.openSSHLine) comment\t x\n\(hashed) \(TestKeys.c.openSSHLine)\n@revoked * \(TestKeys.c.openSSHLine)\ngarbage line \u{1}\0 ok\nweb \(TestKeys.a.openSSHLine)\nlast-without-newline \(TestKeys.a.openSSHLine)"
        _ = FileManager.default.createFile(atPath: path, contents: Data(original.utf8))
        chmod(path, 0o640)
        let writer = KnownHostsWriter(path: path, hashNames: false)
        try writer.replace(TestKeys.a, with: TestKeys.c, for: "web", basedOn: try KnownHostsFile.read(path: path))
        let expected = "# team hosts\r\n\n  other,web \(TestKeys.b.openSSHLine) comment\t x\n\(hashed) \(TestKeys.c.openSSHLine)\n@revoked * \(TestKeys.c.openSSHLine)\ngarbage line \u{1}\0 ok\nlast-without-newline \(TestKeys.a.openSSHLine)\nweb \(TestKeys.c.openSSHLine)\n"
        XCTAssertEqual(bytes(path), Array(expected.utf8))
        var info = stat()
        stat(path, &info)
        XCTAssertEqual(info.st_mode & 0o777, 0o640, "the mode is kept")
        XCTAssertEqual(try writer.remove(names: ["other"]), 2, "plain and hashed entries for the name go")
        XCTAssertTrue(String(decoding: bytes(path), as: UTF8.self).contains("  web \(TestKeys.b.openSSHLine) comment\t x\n"))
        XCTAssertFalse(String(decoding: bytes(path), as: UTF8.self).contains(hashed))
    }

    func testConcurrentChangeToTheSameHostIsRefusedAndUnrelatedOnesAreKept() throws {
        let path = directory.appendingPathComponent("known_hosts").path
        _ = FileManager.default.createFile(atPath: path, contents: Data("web \(TestKeys.a.openSSHLine)\n".utf8))
        let snapshot = try KnownHostsFile.read(path: path)
        let handle = FileHandle(forWritingAtPath: path)!
        handle.seekToEndOfFile()
        handle.write(Data("db \(TestKeys.b.openSSHLine)\n".utf8))
        try handle.close()
        let writer = KnownHostsWriter(path: path, hashNames: true)
        try writer.replace(TestKeys.a, with: TestKeys.c, for: "web", basedOn: snapshot)
        let after = try KnownHostsFile.read(path: path)
        XCTAssertEqual(after.lines[0].raw, Array("db \(TestKeys.b.openSSHLine)".utf8), "the unrelated append is kept")
        XCTAssertEqual(try TestKeys.verdict(String(decoding: after.bytes, as: UTF8.self), TestKeys.c, host: "web"), .trusted)
        XCTAssertFalse(String(decoding: after.bytes, as: UTF8.self).contains("web "), "the new name is hashed")
        XCTAssertThrowsError(try writer.replace(TestKeys.c, with: TestKeys.a, for: "web", basedOn: snapshot)) { error in
            XCTAssertEqual(error as? KnownHostsWriter.Refusal, .concurrentChange(path: path))
        }
    }

    func testWritesThroughSymlinksAndCreatesTheDirectoryPrivately() throws {
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("home"), withIntermediateDirectories: false)
        let sshDirectory = directory.appendingPathComponent("home/.ssh").path
        let path = sshDirectory + "/known_hosts"
        try KnownHostsWriter(path: path, hashNames: false).add(TestKeys.a, for: ["web"])
        var info = stat()
        stat(sshDirectory, &info)
        XCTAssertEqual(info.st_mode & 0o777, 0o700)
        let link = directory.appendingPathComponent("link").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        try KnownHostsWriter(path: link, hashNames: false).add(TestKeys.b, for: ["db"])
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: link), path, "the link stays a link")
        XCTAssertEqual(String(decoding: bytes(path), as: UTF8.self), "web \(TestKeys.a.openSSHLine)\ndb \(TestKeys.b.openSSHLine)\n")
    }

    func testNamesThatAreNotPlainNamesAreRefused() {
        let writer = KnownHostsWriter(path: directory.appendingPathComponent("kh").path, hashNames: false)
        for name in ["a,b", "*", "a b", "!x", "", "a\nb"] {
            XCTAssertThrowsError(try writer.add(TestKeys.a, for: [name]), name)
        }
    }

    /// Four processes add 25 hosts each into one file at once; ssh-keygen reads it meanwhile.
    func testFourProcessesSavingHundredHostsLoseNone() throws {
        let path = directory.appendingPathComponent("known_hosts").path
        _ = FileManager.default.createFile(atPath: path, contents: Data("# shared\n".utf8))
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        var children: [SpawnedProcess] = []
        defer { children.forEach { $0.terminate() } }
        for worker in 0..<4 {
            let environment = ProcessInfo.processInfo.environment.merging(["FT_WRITER_HELPER": "\(path)|w\(worker)|25"]) { $1 }
            children.append(try SpawnedProcess(executable, ["FleetTrustCoreTests.WriterHelperTests/testHelperAddsHostsWhenSpawned"],
                                                environment: environment))
        }
        var readerFailures = 0
        while children.contains(where: \.isRunning) {
            let status = try? runToolStatus("/usr/bin/ssh-keygen", ["-F", "w0-h0.example", "-f", path])
            if status == nil || status! > 1 { readerFailures += 1 }
        }
        XCTAssertEqual(children.map(\.exitStatus), [0, 0, 0, 0])
        XCTAssertEqual(readerFailures, 0, "ssh-keygen -F could read the file throughout")
        let file = try KnownHostsFile.read(path: path)
        XCTAssertEqual(file.lines.count, 101)
        for worker in 0..<4 {
            for host in 0..<25 {
                XCTAssertEqual(file.matchingLines("w\(worker)-h\(host).example").count, 1, "w\(worker)-h\(host)")
            }
        }
        XCTAssertEqual(try runToolStatus("/usr/bin/ssh-keygen", ["-F", "w3-h24.example", "-f", path]), 0)
    }
}

/// Runs only inside the processes `testFourProcessesSavingHundredHostsLoseNone` spawns.
final class WriterHelperTests: XCTestCase {
    func testHelperAddsHostsWhenSpawned() throws {
        guard let spec = ProcessInfo.processInfo.environment["FT_WRITER_HELPER"] else {
            throw XCTSkip("only runs as a child of the concurrency test")
        }
        let parts = spec.split(separator: "|").map(String.init)
        let writer = KnownHostsWriter(path: parts[0], hashNames: Int(parts[1].dropFirst())! % 2 == 1)
        for host in 0..<Int(parts[2])! {
            let name = "\(parts[1])-h\(host).example"
            let snapshot = try KnownHostsFile.read(path: parts[0])
            try writer.add(TestKeys.a, for: [name], basedOn: snapshot)
        }
    }
}

func runToolStatus(_ path: String, _ arguments: [String]) throws -> Int32 {
    try Tool.run(path, arguments).status
}
