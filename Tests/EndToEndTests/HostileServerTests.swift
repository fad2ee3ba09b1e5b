import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// Each misbehaving server runs as its own process on 127.0.0.1 beside a real sshd; fleettrust
/// must classify it within the timeout, keep the real host unaffected, stay small, and print
/// nothing a terminal would interpret.
final class HostileServerTests: XCTestCase {
    private var servers: [SpawnedProcess] = []

    override func tearDown() {
        servers.forEach { $0.terminate() }
        servers = []
    }

    private func startHostile(_ behavior: HostileBehavior) throws -> Int {
        let dir = FileManager.default.temporaryDirectory.path
        let portFile = "\(dir)/ft-hostile-\(getpid())-\(behavior.rawValue)"
        defer { unlink(portFile) }
        let process = try SpawnedProcess("/bin/sh", ["-c", "exec \"$0\" hostile --behavior \"$1\" --lifetime 60 > \"$2\"",
                                                     BuiltProducts.testfleet, behavior.rawValue, portFile])
        servers.append(process)
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8),
               let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                return port
            }
            usleep(20_000)
        }
        throw TestFleetError.toolFailed("hostile server \(behavior.rawValue) did not start")
    }

    func testEveryHostileServerIsClassifiedWithoutHarmingTheRealHost() throws {
        let fleet = try TestFleet.start(hosts: 1)
        defer { fleet.stop() }
        let expected: [(HostileBehavior, stage: String, code: String)] = [
            (.silent, "banner", "banner-timeout"),
            (.slowBanner, "banner", "banner-timeout"),
            (.preBannerFlood, "banner", "not-ssh"),
            (.endlessBanner, "banner", "not-ssh"),
            (.garbageAfterBanner, "key-exchange", "kex-failed"),
            (.closeDuringKex, "key-exchange", "connection-closed"),
            // Its last packet is a DISCONNECT, which our client reads; libssh, trying after
            // ours, fails no further, so ours is the failure kept.
            (.escapeBanner, "key-exchange", "connection-closed"),
            (.http, "banner", "not-ssh"),
        ]
        var targets = ["\(fleet.hosts[0].address):\(fleet.hosts[0].port)"]
        for (behavior, _, _) in expected { targets.append("127.0.0.1:\(try startHostile(behavior))") }
        let run = try ProgramRun.run(BuiltProducts.fleettrust, ["discover", "--timeout", "3"] + targets, limit: 60)

        XCTAssertEqual(run.status, 1, "some hosts failed, so the exit status says so")
        XCTAssertLessThan(run.seconds, 30, "hostile servers must not stretch the run beyond its timeouts")
        XCTAssertLessThan(run.maxResidentKilobytes, 200_000, "memory stays bounded under floods")
        for byte in run.stdout + run.stderr {
            XCTAssertTrue(byte == 0x0a || (byte >= 0x20 && byte != 0x7f), "control byte \(byte) reached the terminal")
        }
        let realKeys = fleet.hosts[0].publicKeys.map(\.sha256Fingerprint)
        for fingerprint in realKeys { XCTAssertTrue(run.stdoutText.contains(fingerprint), "real host's \(fingerprint) missing") }
        let lines = run.stderrText.split(separator: "\n").map(String.init)
        for ((behavior, stage, code), target) in zip(expected, targets.dropFirst()) {
            let line = lines.first { $0.contains(target + ":") }
            XCTAssertNotNil(line, "\(behavior.rawValue): no error line for \(target)")
            XCTAssertTrue(line?.contains("\(stage) failed") == true && line?.hasSuffix("(\(code))") == true,
                          "\(behavior.rawValue): expected \(stage)/\(code), got: \(line ?? "")")
        }
    }
}
