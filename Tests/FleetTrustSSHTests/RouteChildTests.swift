import Foundation
import XCTest
import FleetTrustCore
@testable import FleetTrustSSH

/// `RouteChild` on swift-subprocess keeps what routes rely on: a channel child talks over the
/// socket it was given (the parent keeping its end), leads a process group of its own that `stop`
/// ends as a whole, writes its standard error to a private file, and starts with default signals;
/// a control master stays in our process group; `exitStatus` never blocks.
final class RouteChildTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "ft-routechild-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func testChannelChildTalksOverItsSocketInAGroupOfItsOwnWithAPrivateErrorFile() throws {
        var pair: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair), 0)
        defer { close(pair[0]) }
        let errorPath = directory + "/err-1"
        let oldPipe = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, oldPipe) }
        let child = try RouteChild(["/bin/sh", "-c", "read line; echo \"got $line\"; echo oops >&2; exec sleep 600"],
                                   stdio: pair[1], stderrPath: errorPath)
        close(pair[1])
        XCTAssertNil(child.exitStatus(), "running: no status, and asking does not block")
        XCTAssertEqual(write(pair[0], "hello\n", 6), 6)
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(pair[0], &buffer, buffer.count)
        XCTAssertEqual(String(decoding: buffer.prefix(max(0, count)), as: UTF8.self), "got hello\n")
        XCTAssertTrue(waitUntil { child.errorOutput() == "oops\n" }, "stderr goes to its file: \(child.errorOutput())")
        var info = stat()
        XCTAssertEqual(stat(errorPath, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600, "a fresh error file is private")
        XCTAssertEqual(getpgid(child.pid), child.pid, "leads a process group of its own")
        XCTAssertTrue(waitUntil { Self.signalMask("SigIgn", of: child.pid).map { $0 & 0x7fff_ffff } == 0 },
                      "no signal ignored (SIGPIPE is ignored here)")
        XCTAssertEqual(Self.signalMask("SigBlk", of: child.pid).map { $0 & 0x7fff_ffff }, 0, "no signal blocked")
        child.stop()
        XCTAssertEqual(child.exitStatus(), 128 + SIGTERM)
        XCTAssertEqual(kill(child.pid, 0), -1, "reaped: not even a zombie keeps the PID")
    }

    func testStopEndsTheChildsWholeGroupEvenWhatIgnoresSIGTERM() throws {
        let marker = directory + "/grandchild"
        let child = try RouteChild(["/bin/sh", "-c", "sh -c 'echo $$ > \(marker); trap \"\" TERM; exec sleep 600' & wait"],
                                   stdio: nil, stderrPath: directory + "/err-2")
        XCTAssertTrue(waitUntil { (try? String(contentsOfFile: marker, encoding: .utf8)) != nil })
        let grandchild = try XCTUnwrap(pid_t(String(contentsOfFile: marker, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        XCTAssertTrue(waitUntil { (try? String(contentsOfFile: "/proc/\(grandchild)/comm", encoding: .utf8)) == "sleep\n" })
        XCTAssertEqual(getpgid(grandchild), child.pid)
        child.stop(grace: .milliseconds(200))
        XCTAssertNotNil(child.exitStatus())
        XCTAssertTrue(waitUntil { kill(grandchild, 0) == -1 || Self.isZombie(grandchild) }, "the group's other member is gone too")
    }

    func testControlMasterStaysInOurGroupAndAnExitIsSeenWithoutBlocking() throws {
        let errorPath = directory + "/err-3"
        XCTAssertTrue(FileManager.default.createFile(atPath: errorPath, contents: Data("stale words\n".utf8)))
        let master = try RouteChild(["/bin/sh", "-c", "echo fresh >&2; exit 3"], stdio: nil, stderrPath: errorPath, ownGroup: false)
        XCTAssertTrue(waitUntil { master.exitStatus() != nil })
        XCTAssertEqual(master.exitStatus(), 3)
        XCTAssertEqual(master.errorOutput(), "fresh\n", "the error file is truncated, not appended to")
        let sleeper = try RouteChild(["/bin/sleep", "600"], stdio: nil, stderrPath: directory + "/err-4", ownGroup: false)
        XCTAssertEqual(getpgid(sleeper.pid), getpgrp())
        sleeper.stop()
        XCTAssertEqual(sleeper.exitStatus(), 128 + SIGTERM)
    }

    func testAProgramThatCannotRunIsAProxyFailure() {
        XCTAssertThrowsError(try RouteChild(["/nonexistent/fleettrust-proxy"], stdio: nil, stderrPath: directory + "/err-5")) { error in
            let failure = error as? ProbeFailure
            XCTAssertEqual(failure?.code, .proxyCommandFailed)
            XCTAssertTrue(failure?.message.value.contains("cannot run /nonexistent/fleettrust-proxy") ?? false, "\(error)")
        }
    }

    private static func signalMask(_ name: String, of pid: pid_t) -> UInt64? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return nil }
        return UInt64(line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces), radix: 16)
    }

    private static func isZombie(_ pid: pid_t) -> Bool {
        ((try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? "").contains(") Z ")
    }

    private func waitUntil(timeout: TimeInterval = 10, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            if Date() > deadline { return false }
            usleep(10_000)
        }
        return true
    }
}
