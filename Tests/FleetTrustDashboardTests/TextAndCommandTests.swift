import FleetTrustCore
@testable import FleetTrustDashboard
import Foundation
import XCTest

final class TextAndCommandTests: XCTestCase {
    func testWideCharactersTakeTwoColumnsAndTruncationRespectsThem() {
        XCTAssertEqual(DisplayWidth.of("主机-a"), 6)
        XCTAssertEqual(DisplayWidth.fit("主机主机", to: 5), "主机…")
        XCTAssertEqual(DisplayWidth.fit("主机主机", to: 6), "主机… ")
        XCTAssertEqual(DisplayWidth.of(DisplayWidth.fit("主机主机", to: 5)), 5)
        XCTAssertEqual(DisplayWidth.of("e\u{301}"), 1)
    }

    func testFingerprintsAreShortenedInTheMiddleKeepingBothEnds() {
        let short = DisplayWidth.middleTruncate(Fixtures.ed25519Fingerprint, to: 20)
        XCTAssertEqual(DisplayWidth.of(short), 20)
        let parts = short.components(separatedBy: "…")
        XCTAssertTrue(Fixtures.ed25519Fingerprint.hasPrefix(parts[0]))
        XCTAssertTrue(Fixtures.ed25519Fingerprint.hasSuffix(parts[1]))
    }

    /// The judgement connect starts from: the host judged against `files` (empty files).
    private func judged(_ host: InventoryHost, files: [String] = ["/k"]) -> JudgedHost {
        FleetJudge(knownHosts: KnownHosts(files: files.map { KnownHostsFile(path: $0, bytes: []) }), pins: nil)
            .judge(host, Fixtures.result(host, keys: [Fixtures.ed25519]))
    }

    func testTheDefaultConnectCommandChecksStrictlyAgainstTheFilesTheHostWasJudgedAgainst() {
        let host = InventoryHost(name: "web1", address: "10.1.2.3", port: 2222)
        XCTAssertEqual(try ConnectCommand().arguments(for: judged(host, files: ["/tmp/kh", "/tmp/my files/kh2"])),
                       ["ssh", "-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile=\"/tmp/kh\" \"/tmp/my files/kh2\"",
                        "-o", "GlobalKnownHostsFile=/dev/null", "-p", "2222", "10.1.2.3"])
    }

    func testConnectUsesTheHostKeyAliasAndAlgorithmsTheHostWasJudgedUnder() throws {
        let host = InventoryHost(name: "web1", address: "10.1.2.3", hostKeyAlias: "web1.prod",
                                 sshOptions: SSHHostOptions(hostKeyAlgorithms: "+ssh-rsa", checkHostIP: true))
        let arguments = try ConnectCommand().arguments(for: judged(host))
        XCTAssertTrue(arguments.contains("HostKeyAlias=\"web1.prod\""), "\(arguments)")
        XCTAssertTrue(arguments.contains("HostKeyAlgorithms=+ssh-rsa"), "\(arguments)")
        XCTAssertTrue(arguments.contains("CheckHostIP=yes"), "\(arguments)")
    }

    func testConnectToAHostOfAnotherInventoryUsesTheSSHConfigurationItWasJudgedUnder() throws {
        var options = SSHHostOptions()
        options.caSignatureAlgorithms = "ssh-ed25519"
        options.requiredRSASize = 3072
        let host = InventoryHost(name: "web1", address: "10.1.2.3", sshOptions: options)
        let arguments = try ConnectCommand(routeConfig: "/etc/fleet/ssh_config").arguments(for: judged(host))
        XCTAssertEqual(Array(arguments.prefix(3)), ["ssh", "-F", "/etc/fleet/ssh_config"])
        XCTAssertTrue(arguments.contains("CASignatureAlgorithms=ssh-ed25519"), "\(arguments)")
        XCTAssertTrue(arguments.contains("RequiredRSASize=3072"), "\(arguments)")
    }

    func testConnectFromARecordingLeavesTheScannersRouteToThisMachinesSSH() throws {
        var host = InventoryHost(name: "web1", address: "10.1.2.3")
        host.routing = HostRoute.parse("ProxyJump bastion.example.com")
        XCTAssertTrue(try ConnectCommand().arguments(for: judged(host)).contains("-J"), "a live probe's route is followed")
        let recorded = try ConnectCommand(routeConfig: "/etc/fleet/ssh_config", followsProbedRoute: false).arguments(for: judged(host))
        XCTAssertFalse(recorded.contains("-J"), "\(recorded)")
        XCTAssertEqual(Array(recorded.prefix(3)), ["ssh", "-F", "/etc/fleet/ssh_config"])
    }

    func testConnectToAnSSHConfigHostUsesThatFileAndTheAlias() throws {
        let host = InventoryHost(name: "web1", address: "10.1.2.3", source: SourceLocation(file: "/etc/fleet/ssh_config", line: 3),
                                 format: .sshConfig)
        let arguments = try ConnectCommand().arguments(for: judged(host))
        XCTAssertEqual(Array(arguments.prefix(3)), ["ssh", "-F", "/etc/fleet/ssh_config"])
        XCTAssertEqual(arguments.last, "web1", "ssh resolves the alias through the same file")
    }

    func testConnectFollowsTheRouteTheHostWasProbedThrough() throws {
        let jumped = InventoryHost(name: "app", address: "10.1.2.3", routing: HostRoute.parse("ansible_ssh_common_args=-J ops@gate:2200,inner"))
        let arguments = try ConnectCommand().arguments(for: judged(jumped))
        XCTAssertEqual(Array(arguments.prefix(3)), ["ssh", "-J", "ops@gate:2200,inner"])
        XCTAssertEqual(Array(try ConnectCommand(routeConfig: "/etc/fleet/hops").arguments(for: judged(jumped)).prefix(5)),
                       ["ssh", "-F", "/etc/fleet/hops", "-J", "ops@gate:2200,inner"], "hops resolved as the scan resolved them")
        let commanded = InventoryHost(name: "db", address: "10.1.2.4", routing: HostRoute.parse("ansible_ssh_common_args=-o ProxyCommand=\"ssh -W %h:%p gate\""))
        XCTAssertTrue(try ConnectCommand().arguments(for: judged(commanded)).contains("ProxyCommand=ssh -W %h:%p gate"))
        let configured = InventoryHost(name: "web", address: "10.1.2.5", source: SourceLocation(file: "/etc/fleet/ssh_config", line: 3),
                                       format: .sshConfig, routing: HostRoute.parse("ProxyJump gate"))
        XCTAssertFalse(try ConnectCommand().arguments(for: judged(configured)).contains("-J"), "ssh -F finds the ProxyJump itself")
    }

    func testTheInventoryUserWinsOverUserAndTemplatesMayNameTheHost() {
        let command = ConnectCommand(template: "echo {name}={target}:{port}", user: "admin")
        XCTAssertEqual(try command.arguments(for: judged(InventoryHost(name: "a", address: "h", port: 22, user: "ops"))), ["echo", "a=ops@h:22"])
        XCTAssertEqual(try command.arguments(for: judged(InventoryHost(name: "a", address: "h"))), ["echo", "a=admin@h:22"])
    }

    func testHostsOrUsersThatLookLikeOptionsAreNeverPassedToSsh() {
        let command = ConnectCommand()
        XCTAssertThrowsError(try command.arguments(for: judged(InventoryHost(name: "-oProxyCommand=touch /tmp/x"))))
        XCTAssertThrowsError(try command.arguments(for: judged(InventoryHost(name: "a", address: "h", user: "-oProxyCommand=x"))))
    }

    func testTheNameSavedIsTheOneSshLooksUp() {
        func name(_ host: InventoryHost) -> [String] { judged(host).saveNames }
        XCTAssertEqual(name(InventoryHost(name: "a", address: "10.0.0.1")), ["10.0.0.1"])
        XCTAssertEqual(name(InventoryHost(name: "a", address: "10.0.0.1", port: 2222)), ["[10.0.0.1]:2222"])
        XCTAssertEqual(name(InventoryHost(name: "a", port: 2222, hostKeyAlias: "Alias")), ["alias"])
        XCTAssertEqual(name(InventoryHost(name: "a", address: "Web1.Example", port: 2222)), ["[web1.example]:2222"])
        XCTAssertEqual(name(InventoryHost(name: "a", address: "127.1")), ["127.0.0.1"], "canonicalised as ssh does")
        XCTAssertEqual(name(InventoryHost(name: "a", address: "0x7f000301")), ["127.0.3.1"])
        XCTAssertEqual(name(InventoryHost(name: "a", address: "::ffff:7f00:301", port: 2200)), ["[::ffff:127.0.3.1]:2200"])
    }

    func testTheForegroundChildRunsTheCommandAndReportsItsExitStatus() {
        XCTAssertEqual(ForegroundChild.run(["sh", "-c", "exit 3"]), .exited(3))
        XCTAssertEqual(ForegroundChild.run(["sh", "-c", "kill -TERM $$"]), .signalled(SIGTERM))
        guard case .couldNotStart = ForegroundChild.run(["/nonexistent/ssh"]) else { return XCTFail() }
    }

    func testTheChildGetsDefaultInterruptHandlingWhileTheDashboardIgnoresIt() {
        let previous = signal(SIGINT, SIG_IGN)
        defer { signal(SIGINT, previous) }
        XCTAssertEqual(ForegroundChild.run(["sh", "-c", "kill -INT $$; exit 0"]), .signalled(SIGINT))
    }

    func testTheAuditLogAppendsOneJSONLinePerHostWithOldAndNewFingerprints() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("audit-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = AuditLog(path: directory.appendingPathComponent("state/audit.jsonl").path)
        let host = InventoryHost(name: "web1", address: "10.0.0.1", port: 2201)
        let item = DecisionItem(index: 0, host: host, names: ["[10.0.0.1]:2201"], keys: [Fixtures.ed25519],
                                previous: [Fixtures.oldLine], file: "/tmp/kh")
        let time = Date(timeIntervalSince1970: 1_800_000_000)
        try log.append(AuditLog.records(for: Decision(kind: .replace, items: [item]), user: "alice", time: time, outcome: "saved"))
        try log.append([AuditLog.connectRecord(host: host, fingerprints: [], command: ["ssh"], user: "alice", time: time, outcome: "ok")])
        let lines = try String(contentsOfFile: log.path, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, 2)
        let record = try JSONDecoder().decode(AuditLog.Record.self, from: Data(lines[0].utf8))
        XCTAssertEqual(record.action, "replace")
        XCTAssertEqual(record.user, "alice")
        XCTAssertEqual(record.host, "web1")
        XCTAssertEqual(record.time, "2027-01-15T08:00:00.000Z")
        XCTAssertEqual(record.oldFingerprints, [Fixtures.otherEd25519.sha256Fingerprint])
        XCTAssertEqual(record.newFingerprints, [Fixtures.ed25519Fingerprint])
        XCTAssertEqual(record.oldEntries, ["/tmp/kh:7: " + Fixtures.oldLine.text.value])
        let mode = try FileManager.default.attributesOfItem(atPath: log.path)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
    }

    func testAuditLogDefaultsToXDGStateHome() {
        XCTAssertEqual(AuditLog.defaultPath(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"]), "/s/fleettrust/audit.jsonl")
        XCTAssertEqual(AuditLog.defaultPath(environment: ["HOME": "/h"]), "/h/.local/state/fleettrust/audit.jsonl")
    }
}

final class WrapTests: XCTestCase {
    func testWrappingKeepsSpacesBreaksAtWordsAndNeverCutsAFingerprintShort() {
        XCTAssertEqual(DisplayWidth.wrap(" Pin the keys", width: 40, indent: "   "), [" Pin the keys"])
        XCTAssertEqual(DisplayWidth.wrap("aaa bbb ccc", width: 7, indent: "  "), ["aaa bbb", "  ccc"])
        let fingerprint = Fixtures.ed25519Fingerprint
        let lines = DisplayWidth.wrap("key " + fingerprint, width: 30, indent: " ")
        XCTAssertTrue(lines.allSatisfy { DisplayWidth.of($0) <= 30 }, "\(lines)")
        XCTAssertEqual(lines.joined().replacingOccurrences(of: " ", with: ""), "key" + fingerprint)
    }
}
