import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// The fleet is the ground truth of every end-to-end test, so its own claims are checked
/// against OpenSSH first: the keys it reports are the ones sshd serves, and each sample
/// known_hosts role gets the verdict the real `ssh` gives.
final class TestFleetTests: XCTestCase {
    func testSampleKnownHostsRolesAreWhatRealSshDecides() throws {
        let fleet = try TestFleet.start(hosts: 5)
        defer { fleet.stop() }
        let expected: [SSHOracle.Verdict] = [.trustedByCA, .trusted, .unknown, .changed, .revoked]
        for (host, verdict) in zip(fleet.hosts, expected) {
            let outcome = try SSHOracle.check(name: host.address, port: host.port, knownHosts: fleet.knownHostsPath)
            XCTAssertEqual(outcome.verdict, verdict, "host\(host.index): \(outcome.transcript.suffix(400))")
        }
    }

    func testPublicKeysAreTheOnesSshKeygenReadsFromTheFiles() throws {
        let fleet = try TestFleet.start(hosts: 1)
        defer { fleet.stop() }
        let host = fleet.hosts[0]
        XCTAssertEqual(host.publicKeys.map(\.type), ["ssh-ed25519", "ecdsa-sha2-nistp256", "ssh-rsa"])
        for (key, file) in zip(host.publicKeys, host.publicKeyFiles) {
            let line = try Tool.check("/usr/bin/ssh-keygen", ["-lf", file])
            XCTAssertTrue(line.contains(key.sha256Fingerprint), line)
        }
        XCTAssertEqual(host.publicKeys[2].bits, 3072)
        XCTAssertEqual(try HostCertificate(XCTUnwrap(host.certificate)).signatureKey, fleet.caPublicKey)
    }

    /// A port another process's server takes between the fleet's choice and its sshd's start is
    /// never passed off as the fleet's: that server answers there, but with its own keys.
    func testAHostWhosePortAnotherServerTookIsNeverReportedAsStarted() throws {
        var options = TestFleet.Options(hosts: 1)
        options.certificateHost = false
        options.rsaBits = 2048
        let fleet = try TestFleet(options)
        defer { fleet.stop() }
        let endpoint = fleet.hosts[0].endpoints[0]
        XCTAssertTrue(Loopback.isListening(pid: fleet.hosts[0].pid, address: endpoint.address, port: endpoint.port))
        XCTAssertFalse(Loopback.isListening(pid: getpid(), address: endpoint.address, port: endpoint.port))
        fleet.stopHost(0)
        let intruder = try SilentListener(address: endpoint.address, port: endpoint.port)
        defer { intruder.close() }
        XCTAssertTrue(Loopback.isListening(pid: getpid(), address: endpoint.address, port: endpoint.port))
        XCTAssertThrowsError(try fleet.rekey(host: 0), "the intruder accepts on the port, but it is not the fleet's sshd") { error in
            guard case TestFleetError.portTaken = error else { return XCTFail("\(error)") }
        }
    }

    func testStopTerminatesEverySshdByPid() throws {
        let fleet = try TestFleet.start(hosts: 2)
        let pids = fleet.hosts.map(\.pid)
        XCTAssertTrue(pids.allSatisfy { kill($0, 0) == 0 })
        fleet.stop()
        XCTAssertTrue(pids.allSatisfy { kill($0, 0) != 0 }, "sshd processes still alive after stop()")
        XCTAssertFalse(Loopback.accepts(address: "127.0.0.1", port: fleet.hosts[0].port))
    }

    func testRekeyedHostIsChangedForRealSsh() throws {
        let fleet = try TestFleet.start(hosts: 2)
        defer { fleet.stop() }
        let before = fleet.hosts[1].publicKeys
        try fleet.rekey(host: 1)
        XCTAssertNotEqual(before, fleet.hosts[1].publicKeys)
        let outcome = try SSHOracle.check(name: "127.0.0.1", port: fleet.hosts[1].port, knownHosts: fleet.knownHostsPath)
        XCTAssertEqual(outcome.verdict, .changed)
    }

    func testSilentListenerAcceptsTcpButNeverSpeaks() throws {
        let silent = try SilentListener()
        defer { silent.close() }
        XCTAssertTrue(Loopback.accepts(address: "127.0.0.1", port: silent.port))
        let outcome = try SSHOracle.check(name: "127.0.0.1", port: silent.port, knownHosts: "/dev/null",
                                          extraOptions: ["-o", "ConnectTimeout=1"])
        XCTAssertEqual(outcome.verdict, .other)
        XCTAssertTrue(outcome.transcript.contains("timed out"), outcome.transcript)
    }
}
