import FleetTrustCore
import FleetTrustTestFleet
import Foundation
import XCTest

/// Trust policies, CA pins and the dashboard's pin-only and off flows against the real fleet
/// (real sshd, one host with a real CA's certificate) and the real `ssh`.
final class PolicyFleetTests: XCTestCase {
    private var fleet: TestFleet!
    private var scratch = ""
    private var terminal: DashboardTmux?

    override func setUpWithError() throws {
        scratch = NSTemporaryDirectory() + "policy-fleet-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        fleet = try TestFleet.start(hosts: 5)
        try FileManager.default.copyItem(atPath: fleet.knownHostsPath, toPath: scratch + "/known_hosts")
    }

    override func tearDown() {
        terminal?.stop()
        fleet?.stop()
        try? FileManager.default.removeItem(atPath: scratch)
    }

    private func name(_ index: Int) -> String { fleet.hosts[index].knownHostsName }

    /// An Ansible inventory of the fleet; `vars[i]` is appended to host i's line.
    private func inventory(_ vars: [Int: String] = [:]) throws -> String {
        let path = scratch + "/hosts.ini"
        let lines = fleet.hosts.map { host in
            "h\(host.index) ansible_host=\(host.address) ansible_port=\(host.port) \(vars[host.index] ?? "")"
        }
        try ("[fleet]\n" + lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private func write(_ file: String, _ text: String) throws -> String {
        let path = scratch + "/" + file
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private func scan(_ arguments: [String]) throws -> (ProgramRun, RecordedScan?) {
        let run = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "json", "--known-hosts", scratch + "/known_hosts"] + arguments,
                                     limit: 120)
        return (run, try? RecordedScan.decode(Data(run.stdout)))
    }

    func testEachPolicyDecidesItsHostAndTheInventoryWinsOverTheFile() throws {
        let ed25519 = try XCTUnwrap(fleet.hosts[1].key(ofType: "ssh-ed25519"))
        let pins = try write("pins", """
            \(name(0)) ca:\(fleet.caPublicKey.sha256Fingerprint)
            \(name(1)) \(ed25519.sha256Fingerprint)

            """)
        let policy = try write("policy", """
            # the CA host needs its CA's certificate; the appliance only its pin
            \(name(0)) ca
            \(name(1)) pin-only
            \(name(3)) pinned
            * standard

            """)
        let inventoryPath = try inventory([2: "fleettrust_policy=off", 4: "fleettrust_policy=pinned"])
        let (run, document) = try scan(["--inventory", inventoryPath, "--pins", pins, "--policy", policy])
        let hosts = try XCTUnwrap(document?.hosts, run.stderrText)
        XCTAssertEqual(hosts.map(\.policy), ["ca", "pin-only", "off", "pinned", "pinned"])
        XCTAssertEqual(hosts.map(\.policySource), ["\(policy):2", "\(policy):3", "inventory", "\(policy):4", "inventory"])
        XCTAssertEqual(hosts.map(\.status), [.trusted, .trusted, .unchecked, .changed, .revoked])
        XCTAssertEqual(hosts[0].method, "ca-pin")
        XCTAssertEqual(hosts[1].method, "pin")
        XCTAssertEqual(hosts[2].standardStatus, .new, "what ssh alone would say is kept beside unchecked")
        XCTAssertEqual(run.status, 2, "changed and revoked still make the scan exit 2")
        let certificate = try XCTUnwrap(hosts[0].keys.first { $0.certificate != nil }?.certificate)
        XCTAssertEqual(certificate.warnings, [], "the fleet CA's certificate is vouched for and valid")
        XCTAssertEqual(hosts[0].keys.first { $0.certificate != nil }?.pin, .matched)

        let table = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "table", "--known-hosts", scratch + "/known_hosts",
                                                                  "--inventory", inventoryPath, "--pins", pins, "--policy", policy], limit: 120)
        XCTAssertTrue(table.stdoutText.contains("WARNING: some hosts have the policy off"), table.stdoutText)
        XCTAssertTrue(table.stdoutText.contains("Host certificates expiring soonest:"), table.stdoutText)
    }

    /// A negated pattern matching any of the host's names (here its inventory name) rules the line
    /// out for the host, as in known_hosts: its address must not bring the line back. ssh says
    /// CHANGED for the host; under `*,!h2 off` fleettrust must say so too, not `unchecked`.
    func testANegatedPolicyPatternExcludesTheHostWhateverItsOtherNamesMatch() throws {
        let rogue = try XCTUnwrap(fleet.hosts[3].key(ofType: "ssh-ed25519"))
        let knownHosts = try write("known_hosts", "\(name(2)) \(rogue.openSSHLine)\n")
        let inventory = try inventory()
        let (excluded, excludedDocument) = try scan(["--inventory", inventory, "--no-history", "--policy", try write("policy", "*,!h2 off\n")])
        let host = try XCTUnwrap(excludedDocument?.hosts.first { $0.name == "h2" }, excluded.stderrText)
        XCTAssertEqual(host.status, .changed, host.reason)
        XCTAssertEqual(excluded.status, 2, excluded.stderrText)
        let (named, namedDocument) = try scan(["--inventory", inventory, "--no-history", "--policy", try write("policy", "h2 off\n")])
        XCTAssertEqual(namedDocument?.hosts.first { $0.name == "h2" }?.status, .unchecked, named.stderrText)

        let config = try write("ssh_config", """
            Host h2
              HostName \(fleet.hosts[2].address)
              Port \(fleet.hosts[2].port)
              UserKnownHostsFile \(knownHosts)
              GlobalKnownHostsFile /dev/null

            """)
        XCTAssertEqual(try SSHOracle.handshake(host: "h2", config: config).finding, .changed)
    }

    /// A pin line `*,!h3 FINGERPRINT` does not vouch for h3 through its address: sync saves nothing
    /// for it, while the line without the negation does.
    func testANegatedPinPatternExcludesTheHostWhateverItsOtherNamesMatch() throws {
        let key = try XCTUnwrap(fleet.hosts[3].key(ofType: "ssh-ed25519"))
        let knownHosts = try write("known_hosts", "")
        let inventory = try write("hosts.ini", "[fleet]\nh3 ansible_host=\(fleet.hosts[3].address) ansible_port=\(fleet.hosts[3].port)\n")
        for (line, saved) in [("*,!h3", false), ("*", true)] {
            let pins = try write("pins", "\(line) \(key.sha256Fingerprint)\n")
            let sync = try ProgramRun.run(BuiltProducts.fleettrust, ["sync", "--inventory", inventory, "--known-hosts", knownHosts,
                                                                     "--pins", pins, "--audit-log", scratch + "/audit.log"], limit: 120)
            let written = try String(contentsOfFile: knownHosts, encoding: .utf8)
            XCTAssertEqual(written.contains(key.base64), saved, "pin line \(line): \(sync.stderrText)\n\(written)")
        }
    }

    func testAPolicyFileWithABadLineIsRefusedNamingItsLine() throws {
        let policy = try write("policy", "\(name(0)) standard\n\(name(1)) strict\n")
        let (run, document) = try scan(["--inventory", fleet.inventoryPath, "--policy", policy])
        XCTAssertNil(document)
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderrText.contains("\(policy):2: unknown policy 'strict'"), run.stderrText)
    }

    func testAnUnknownInventoryPolicyIsReportedWithItsLine() throws {
        let (run, _) = try scan(["--inventory", try inventory([1: "fleettrust_policy=lenient"])])
        XCTAssertTrue(run.stderrText.contains("hosts.ini:3:"), run.stderrText)
        XCTAssertTrue(run.stderrText.contains("fleettrust_policy 'lenient'"), run.stderrText)
    }

    /// Under pin-only, trusting a new host writes a pin (not a known_hosts line), and connect hands
    /// the real ssh the pinned key so it still checks strictly; under off nothing can be trusted.
    func testDashboardPinOnlyTrustWritesAPinAndConnectChecksItWithSsh() throws {
        let pins = try write("pins", "")
        let policy = try write("policy", "\(name(2)) pin-only\n\(name(1)) off\n")
        let log = scratch + "/ssh.log"
        let wrapper = try write("connect.sh", """
            #!/bin/sh
            echo "args: $*" > '\(log)'
            ssh -F /dev/null -o BatchMode=yes -o PubkeyAuthentication=no -o PasswordAuthentication=no \
                -o KbdInteractiveAuthentication=no "$@" true 2>> '\(log)'
            """)
        chmod(wrapper, 0o755)
        let before = try String(contentsOfFile: scratch + "/known_hosts", encoding: .utf8)
        let terminal = try DashboardTmux(arguments: ["--inventory", fleet.inventoryPath, "--known-hosts", scratch + "/known_hosts",
                                                     "--audit-log", scratch + "/audit.jsonl", "--pins", pins, "--policy", policy,
                                                     "--connect-command", "\(wrapper) {options} -p {port} fleettrust-test@{host}"],
                                         width: 200)
        self.terminal = terminal
        XCTAssertTrue(terminal.waitFor { !$0.contains("scanning") && $0.contains("C 1 changed") }.0, terminal.capture())
        func select(_ index: Int) {
            terminal.send("/")
            terminal.type(":\(fleet.hosts[index].port)")
            terminal.send("Enter")
            XCTAssertTrue(terminal.waitFor { $0.contains("1 shown") }.0, terminal.capture())
        }
        select(1)
        XCTAssertTrue(terminal.capture().contains("OFF!"), terminal.capture())
        XCTAssertTrue(terminal.capture().contains("UNSAFE: policy off"), terminal.capture())
        terminal.send("t")
        XCTAssertTrue(terminal.waitFor { $0.contains("has the policy off") }.0, terminal.capture())

        terminal.send("/")
        terminal.send("Escape")
        select(2)
        XCTAssertTrue(terminal.waitFor { $0.contains("p unpinned") }.0, terminal.capture())
        terminal.send("t")
        XCTAssertTrue(terminal.waitFor { $0.contains("Pin the presented keys of 1 host") }.0, terminal.capture())
        terminal.send("y")
        XCTAssertTrue(terminal.waitFor { $0.contains("Pinned the keys") && $0.contains("T trusted") }.0, terminal.capture())
        let pinned = try String(contentsOfFile: pins, encoding: .utf8)
        XCTAssertTrue(pinned.hasPrefix(name(2) + " "), pinned)
        XCTAssertTrue(pinned.contains(try XCTUnwrap(fleet.hosts[2].key(ofType: "ssh-ed25519")).sha256Fingerprint), pinned)
        XCTAssertEqual(try String(contentsOfFile: scratch + "/known_hosts", encoding: .utf8), before, "pin-only writes no known_hosts line")

        terminal.send("c")
        let (paused, screen) = terminal.waitFor { $0.contains("press Enter to return") }
        XCTAssertTrue(paused, screen)
        terminal.send("Enter")
        let transcript = try String(contentsOfFile: log, encoding: .utf8)
        XCTAssertTrue(transcript.contains("StrictHostKeyChecking=yes"), transcript)
        XCTAssertTrue(transcript.contains("Permission denied"), "the real ssh accepted the pinned key: \(transcript)")
        XCTAssertFalse(transcript.contains("IDENTIFICATION HAS CHANGED"), transcript)
        XCTAssertFalse(transcript.contains("known_hosts"), "ssh was not given the user's known_hosts: \(transcript)")
    }
}
