import FleetTrustCore
import FleetTrustTestFleet
import Foundation
import XCTest

/// A host reached through a ProxyCommand is never quieter than `ssh` through the same command:
/// a command that ends well while the far end never identified itself is a close before the
/// server's identification (as `ssh` reports it), not a failed route; and a ProxyCommand
/// fleettrust refuses to run, which `ssh` would run, leaves a host with recorded keys at the
/// alarm level.
final class ProxyCommandTrustTests: XCTestCase {
    private var scratch = ""

    override func setUpWithError() throws {
        scratch = NSTemporaryDirectory() + "proxy-trust-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: scratch) }

    /// known_hosts recording a key for `[127.0.0.1]:1`, the name `ssh` looks the hosts below up under.
    private func recordedKnownHosts() throws -> String {
        let path = scratch + "/known_hosts"
        try "[127.0.0.1]:1 \(try TestFleet.throwawayKey(in: scratch).openSSHLine)\n".write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Writes an ssh_config naming `name` at 127.0.0.1:`port` through `proxy`, and returns it with
    /// what the real `ssh` makes of the host through it, reading only `knownHosts`.
    private func proxiedHost(_ name: String, port: Int, proxy: String,
                             knownHosts: String) throws -> (config: String, ssh: SSHOracle.Handshake) {
        let config = scratch + "/config-\(name)"
        try "Host \(name)\n  HostName 127.0.0.1\n  Port \(port)\n  ProxyCommand \(proxy)\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        let oracleConfig = scratch + "/oracle-config-\(name)"
        try ("Include \(config)\nHost *\n  UserKnownHostsFile \(knownHosts)\n  GlobalKnownHostsFile /dev/null\n")
            .write(toFile: oracleConfig, atomically: true, encoding: .utf8)
        return (config, try SSHOracle.handshake(host: name, config: oracleConfig))
    }

    private func scan(_ config: String, knownHosts: String, ownConfig: Bool) throws -> (ProgramRun, RecordedScan.Host) {
        let run = try ProgramRun.run(BuiltProducts.fleettrust, [
            "scan", "--format", "json", "--no-history", "--timeout", "3", "--known-hosts", knownHosts,
            "--inventory", config, "--inventory-format", "ssh-config", "--ssh-config", ownConfig ? config : "/dev/null",
        ])
        let document = try RecordedScan.decode(Data(run.stdout))
        return (run, try XCTUnwrap(document.hosts.first, run.stderrText))
    }

    func testAProxyCommandEndingWellBeforeTheServerSpeaksIsACloseBeforeIdentificationAsSSHSaysIt() throws {
        let knownHosts = try recordedKnownHosts()
        // Reads the start of the client's identification, then exits 0: the far end closed.
        let (config, ssh) = try proxiedHost("through-proxy", port: 1, proxy: "sh -c 'head -c 8 >/dev/null'", knownHosts: knownHosts)
        XCTAssertTrue(ssh.transcript.contains("Connection closed by UNKNOWN port 65535"), ssh.transcript)

        let (run, host) = try scan(config, knownHosts: knownHosts, ownConfig: true)
        XCTAssertEqual(host.error?.stage, "banner", "\(String(describing: host.error)) \(run.stderrText)")
        XCTAssertEqual(host.error?.code, .connectionClosed)
        XCTAssertTrue(host.error?.message.contains("ProxyCommand") == true, "\(String(describing: host.error))")
        XCTAssertEqual(host.status, .unverified, "ssh compares the recorded key with what it meets there: an alarm, not a route failure")
        XCTAssertEqual(run.status, 2)

        // A command that fails (status 3) is the route's failure, as before.
        try "Host through-proxy\n  HostName 127.0.0.1\n  Port 1\n  ProxyCommand sh -c 'echo no route >&2; exit 3'\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        let (_, failed) = try scan(config, knownHosts: knownHosts, ownConfig: true)
        XCTAssertEqual(failed.error?.code, .proxyCommandFailed, "\(String(describing: failed.error))")
        XCTAssertTrue(failed.error?.message.contains("status 3") == true, "\(String(describing: failed.error))")
    }

    /// Self-attack: a ProxyCommand that relays `ssh` to a real sshd whose key changed, and ends
    /// (status 0) as soon as it reads the client's identification on every connection after ssh's. `ssh` says CHANGED; fleettrust
    /// must not call it a failed route (exit 1).
    func testAProxyCommandThatEndsOnlyForFleettrustIsNotQuieterThanSSHsChanged() throws {
        let server = try LabSSHD(address: "127.0.0.1", in: scratch)
        defer { server.stop() }
        let knownHosts = scratch + "/known_hosts_changed"
        try "\(server.knownHostsName) \(try TestFleet.throwawayKey(in: scratch).openSSHLine)\n"
            .write(toFile: knownHosts, atomically: true, encoding: .utf8)
        // Our client identifies itself as the local ssh, so the relay cannot tell the two apart by
        // their identification: it lets the first connection (ssh's, made first below) through and
        // ends every later one once it has read the client's identification.
        let served = scratch + "/relay-served"
        let relay = "sh -c 'IFS= read -r line; if [ -e \(served) ]; then exit 0; fi; : > \(served); "
            + "{ echo \"$line\"; cat; } | exec /usr/bin/socat - TCP:%h:%p'"
        let (config, ssh) = try proxiedHost("behind-relay", port: server.port, proxy: relay, knownHosts: knownHosts)
        XCTAssertEqual(ssh.finding, .changed, ssh.transcript)

        let (run, host) = try scan(config, knownHosts: knownHosts, ownConfig: true)
        XCTAssertEqual(host.status, .unverified, "\(String(describing: host.error)) \(run.stderrText)")
        XCTAssertEqual(run.status, 2, "never quieter than ssh's CHANGED")
    }

    func testAnInventorysProxyCommandNotRunIsAnAlarmForAHostWithRecordedKeys() throws {
        let marker = scratch + "/ran"
        let config = scratch + "/inventory.conf"
        try "Host from-inventory\n  HostName 127.0.0.1\n  Port 1\n  ProxyCommand /usr/bin/touch \(marker)\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        let (recordedRun, recorded) = try scan(config, knownHosts: try recordedKnownHosts(), ownConfig: false)
        XCTAssertEqual(recorded.error?.code, .proxyCommandNotAllowed, recordedRun.stderrText)
        XCTAssertEqual(recorded.status, .unverified, "ssh would run the command and compare the key it meets with the recorded one")
        XCTAssertEqual(recordedRun.status, 2)
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker), "the inventory's ProxyCommand ran")

        let (_, unrecorded) = try scan(config, knownHosts: scratch + "/empty_known_hosts", ownConfig: false)
        XCTAssertEqual(unrecorded.error?.code, .proxyCommandNotAllowed)
        XCTAssertEqual(unrecorded.status, .error, "nothing recorded: nothing for ssh to compare with")
    }
}
