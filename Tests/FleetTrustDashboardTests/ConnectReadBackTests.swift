import FleetTrustCore
@testable import FleetTrustDashboard
import Foundation
import XCTest

/// What connect hands `ssh` is what was judged, as the real `ssh` reads it back (`ssh -G`): the
/// known_hosts files under their own names whatever `%`, quotes, spaces or backslashes they hold,
/// the RevokedHostKeys file, and under `pinned` exactly the keys judged trusted.
final class ConnectReadBackTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "connect-read-back-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: directory) }

    private let connect = ConnectCommand(template: "ssh -F /dev/null {options} -p {port} {target}")

    private func judged(_ host: InventoryHost, files: [String], knownHosts: String = "", pins: String? = nil) -> JudgedHost {
        let sets = KnownHosts(files: files.map { KnownHostsFile(path: $0, bytes: Array(knownHosts.utf8)) })
        let pinSet = pins.map { try! PinSet.parse(path: directory + "/pins", bytes: Array($0.utf8)) }
        let keys = [Fixtures.ed25519, Fixtures.ecdsa].map { DiscoveredKey(key: $0, handshakeMilliseconds: 1) }
        return FleetJudge(knownHosts: sets, pins: pinSet)
            .judge(host, ProbeResult(host: host.name, port: host.port, keys: keys, serverVersion: "SSH-2.0-OpenSSH_9.2p1"))
    }

    /// `ssh -G` of connect's arguments: each keyword's value as `ssh` will use it.
    private func readBack(_ arguments: [String]) throws -> [String: String] {
        XCTAssertEqual(arguments.first, "ssh")
        let ssh = Process()
        ssh.executableURL = URL(fileURLWithPath: "/usr/bin/ssh")
        ssh.arguments = ["-G"] + arguments.dropFirst()
        let output = Pipe()
        ssh.standardOutput = output
        ssh.standardError = FileHandle.nullDevice
        try ssh.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        ssh.waitUntilExit()
        XCTAssertEqual(ssh.terminationStatus, 0, "ssh -G \(arguments)")
        var settings: [String: String] = [:]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            if parts.count == 2 { settings[String(parts[0])] = String(parts[1]) }
        }
        return settings
    }

    func testSshReadsBackTheVeryKnownHostsAndRevokedHostKeysFilesThatWereJudged() throws {
        let files = [directory + "/kh_%h", directory + "/a b\"c\\d #e", directory + "/tilde~%%p"]
        var host = InventoryHost(name: "web", address: "10.0.0.5", port: 2222)
        host.sshOptions.revokedHostKeys = [directory + "/revoked \"list\""]
        let arguments = try connect.arguments(for: judged(host, files: files))
        let settings = try readBack(arguments)
        XCTAssertEqual(settings["userknownhostsfile"], files.joined(separator: " "), "\(arguments)")
        XCTAssertEqual(settings["globalknownhostsfile"], "/dev/null")
        XCTAssertEqual(settings["stricthostkeychecking"], "true")
        XCTAssertEqual(settings["revokedhostkeys"], directory + "/revoked \"list\"")
    }

    func testAFileSshWouldReadUnderAnotherNameIsRefused() {
        let host = InventoryHost(name: "web", address: "10.0.0.5")
        XCTAssertThrowsError(try connect.arguments(for: judged(host, files: [directory + "/${HOME}/kh"]))) {
            XCTAssertTrue("\($0)".contains("'${'"), "\($0)")
        }
        for revoked in [[directory + "/krl_%h"], [directory + "/one", directory + "/two"]] {
            var listed = host
            listed.sshOptions.revokedHostKeys = revoked
            XCTAssertThrowsError(try connect.arguments(for: judged(listed, files: [directory + "/kh"])), "\(revoked)")
        }
    }

    func testUnderThePinnedPolicySshIsGivenOnlyTheKeysJudgedTrusted() throws {
        var host = InventoryHost(name: "web", address: "10.0.0.5", port: 2222)
        host.policy = "pinned"
        let name = "[10.0.0.5]:2222"
        let recorded = "\(name) \(Fixtures.ed25519.openSSHLine)\n\(name) \(Fixtures.ecdsa.openSSHLine)\n"
        let judgedHost = judged(host, files: [directory + "/kh"], knownHosts: recorded,
                                pins: "\(name) \(Fixtures.ed25519.sha256Fingerprint)\n")
        XCTAssertEqual(judgedHost.status, .trusted)
        let lines = try XCTUnwrap(ConnectCommand.policyKnownHosts(for: judgedHost))
        XCTAssertEqual(lines, "\(name) \(Fixtures.ed25519.openSSHLine)\n", "the recorded ECDSA key no pin names is not handed over")
        let settings = try readBack(try connect.arguments(for: judgedHost, knownHosts: [directory + "/private"]))
        XCTAssertEqual(settings["userknownhostsfile"], directory + "/private")
    }
}
