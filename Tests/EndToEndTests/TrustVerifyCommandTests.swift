import Foundation
import FleetTrustCore
import FleetTrustTestFleet
import XCTest

/// `fleettrust verify` and the host status against the test fleet's real sshd and the real `ssh`.
final class TrustVerifyCommandTests: XCTestCase {
    static let algorithms = ["ssh-ed25519": "ssh-ed25519", "ecdsa-sha2-nistp256": "ecdsa-sha2-nistp256", "ssh-rsa": "rsa-sha2-512"]

    func oracleWord(_ verdict: SSHOracle.Verdict) -> String { verdict == .unknown ? "new" : verdict.rawValue }

    func testVerifyCommandAgreesWithSSHForEveryKeyOfTheSampleFleet() throws {
        let fleet = try TestFleet.start(hosts: 5)
        defer { fleet.stop() }
        var compared = 0
        for host in fleet.hosts {
            var cases = zip(host.publicKeys, host.publicKeyFiles).map { ($0.0.type, Self.algorithms[$0.0.type]!, $0.1) }
            if let certificate = host.certificate, let file = host.certificateFile {
                cases.append((certificate.type, certificate.type, file))
            }
            for (type, algorithm, file) in cases {
                let run = try ProgramRun.run(BuiltProducts.fleettrust, ["verify", "--known-hosts", fleet.knownHostsPath,
                                                                         "--port", String(host.port), "--json", host.address, file])
                let json = try JSONSerialization.jsonObject(with: Data(run.stdout)) as? [String: Any]
                let ours = json?["verdict"] as? String
                let oracle = try SSHOracle.check(name: host.address, port: host.port, knownHosts: fleet.knownHostsPath,
                                                 extraOptions: ["-o", "HostKeyAlgorithms=\(algorithm)"])
                XCTAssertEqual(ours, oracleWord(oracle.verdict), "host \(host.index) \(type): \(run.stderrText)")
                let alarm = ["changed", "revoked", "pin-mismatch", "invalid-certificate", "ip-mismatch"].contains(ours ?? "")
                XCTAssertEqual(run.status, ours == "trusted" || ours == "trusted-by-ca" ? 0 : alarm ? 2 : 1,
                               "exit status for \(ours ?? "?"), as scan's")
                compared += 1
            }
        }
        XCTAssertGreaterThanOrEqual(compared, 16)
    }

    /// HOST:PORT, as the scan table prints an endpoint, and [HOST]:PORT answer as --port does;
    /// a --port that disagrees is refused.
    func testVerifyTakesTheEndpointAsTheScanTablePrintsIt() throws {
        let fleet = try TestFleet.start(hosts: 2)
        defer { fleet.stop() }
        let host = fleet.hosts[1]
        let oracle = try SSHOracle.check(name: host.address, port: host.port, knownHosts: fleet.knownHostsPath,
                                         extraOptions: ["-o", "HostKeyAlgorithms=ssh-ed25519"])
        XCTAssertEqual(oracle.verdict, .trusted)
        let file = host.publicKeyFiles[host.publicKeys.firstIndex { $0.type == "ssh-ed25519" }!]
        for endpoint in ["\(host.address):\(host.port)", "[\(host.address)]:\(host.port)"] {
            let run = try ProgramRun.run(BuiltProducts.fleettrust, ["verify", "--known-hosts", fleet.knownHostsPath, endpoint, file])
            XCTAssertEqual(run.status, 0, "\(endpoint): \(run.stdoutText)\(run.stderrText)")
        }
        let clash = try ProgramRun.run(BuiltProducts.fleettrust, ["verify", "--known-hosts", fleet.knownHostsPath, "--port", "22",
                                                                   "\(host.address):\(host.port)", file])
        XCTAssertEqual(clash.status, 64, clash.stderrText)
    }

    func testHostStatusJudgesTheKeySSHNegotiates() throws {
        let fleet = try TestFleet.start(hosts: 5)
        defer { fleet.stop() }
        let h = fleet.hosts
        func line(_ host: TestFleet.Host, _ key: HostKey) -> String { "\(host.knownHostsName) \(key.openSSHLine)\n" }
        let custom = fleet.directory + "/negotiation_known_hosts"
        try (line(h[1], h[1].key(ofType: "ecdsa-sha2-nistp256")!) + line(h[2], h[2].key(ofType: "ssh-rsa")!)
             + line(h[3], h[4].key(ofType: "ecdsa-sha2-nistp256")!)).write(toFile: custom, atomically: true, encoding: .utf8)
        var negotiatedTypes = Set<String>()
        for path in [custom, fleet.knownHostsPath] {
            let judge = FleetJudge(knownHosts: try KnownHosts.read(paths: [path]), pins: nil)
            for host in h.dropFirst() {
                let inventoryHost = InventoryHost(name: host.address, port: host.port,
                                                  sshOptions: SSHHostOptions(hostKeyAlgorithms: "-*-cert-v01@openssh.com"))
                let judged = judge.judge(inventoryHost, ProbeResult(host: host.address, port: host.port,
                                                                    keys: host.publicKeys.map { DiscoveredKey(key: $0) }))
                let negotiated = try XCTUnwrap(judged.negotiatedKey)
                let type = try XCTUnwrap(negotiated.key?.type)
                let oracle = try SSHOracle.check(name: host.address, port: host.port, knownHosts: path,
                                                 extraOptions: ["-o", "HostKeyAlgorithms=-*-cert-v01@openssh.com"])
                XCTAssertEqual(negotiated.verdict.rawValue, oracleWord(oracle.verdict), "host \(host.index) in \(path)")
                XCTAssertTrue(oracle.transcript.contains("host key algorithm: \(Self.algorithms[type]!)"),
                              "ssh negotiated \(type) for host \(host.index) in \(path)")
                negotiatedTypes.insert(type)
            }
        }
        XCTAssertEqual(negotiatedTypes, ["ssh-ed25519", "ecdsa-sha2-nistp256", "ssh-rsa"], "ssh prefers recorded types")
    }

    func testVerifyReportsPinMismatchAndUnreadableInputs() throws {
        let fleet = try TestFleet.start(hosts: 2)
        defer { fleet.stop() }
        let host = fleet.hosts[1]
        let pins = fleet.directory + "/pins"
        try "127.0.0.1 \(fleet.caPublicKey.sha256Fingerprint)\n".write(toFile: pins, atomically: true, encoding: .utf8)
        let run = try ProgramRun.run(BuiltProducts.fleettrust, ["verify", "--known-hosts", fleet.knownHostsPath, "--pins", pins,
                                                                 "--port", String(host.port), "--json", host.address, host.publicKeyFiles[0]])
        let json = try JSONSerialization.jsonObject(with: Data(run.stdout)) as? [String: Any]
        XCTAssertEqual(json?["verdict"] as? String, "pin-mismatch")
        XCTAssertEqual(json?["known_hosts_verdict"] as? String, "trusted", "verify's JSON is snake_case like every other command's")
        XCTAssertEqual(run.status, 2, "a pin mismatch is an alarm, as for scan and sync")
        let missing = try ProgramRun.run(BuiltProducts.fleettrust, ["verify", "--pins", fleet.directory + "/none", host.address, host.publicKeyFiles[0]])
        XCTAssertEqual(missing.status, 64)
        XCTAssertTrue(missing.stderrText.contains("none"), missing.stderrText)
    }
}
