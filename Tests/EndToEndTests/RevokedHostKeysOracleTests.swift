import FleetTrustCore
import FleetTrustTestFleet
import Foundation
import XCTest

/// `RevokedHostKeys` from an ssh_config inventory, judged by `scan` against a real `sshd`, with the
/// real `ssh` given the same file, known_hosts and algorithm as the oracle: KRLs made by the real
/// `ssh-keygen -k` revoking by key, SHA-1, SHA-256 fingerprint, certificate serial (for the CA and
/// for any CA), key id and CA key; plain key lists; a missing file, a truncated KRL and a list with
/// a bad line (which `ssh` refuses to connect with). fleettrust is never quieter than `ssh`.
final class RevokedHostKeysOracleTests: XCTestCase {
    func testScanJudgesRevokedHostKeysExactlyAsTheRealSshOrLouder() throws {
        let lab = try RevocationLab()
        defer { lab.stop() }
        let name = lab.knownHostsName
        let knownHosts = try lab.write("known_hosts", """
            \(name) \(lab.ed25519.openSSHLine)
            \(name) \(lab.rsa.openSSHLine)
            @cert-authority \(name) \(lab.authority.openSSHLine)

            """)
        let truncated = try lab.krl("whole", "key: \(lab.ed25519.openSSHLine)\nserial: 7\n", authority: lab.path("ca.pub"))
        let whole = try XCTUnwrap(FileManager.default.contents(atPath: truncated))
        try whole.prefix(whole.count - 5).write(to: URL(fileURLWithPath: lab.path("truncated.krl")))

        let plain = "ssh-ed25519", cert = "ssh-ed25519-cert-v01@openssh.com", rsa = "rsa-sha2-512"
        typealias Answer = RevocationLab.Answer
        func short(_ algorithm: String) -> String { algorithm == plain ? "plain" : algorithm == cert ? "cert" : "rsa" }
        let cases: [(name: String, file: String, expected: [(algorithm: String, ssh: Answer)])] = [
            ("krl-key", try lab.krl("key", "key: \(lab.ed25519.openSSHLine)\n"), [(plain, .revokedByFile), (cert, .revokedByFile)]),
            ("krl-sha1", try lab.krl("sha1", "sha1: \(lab.ed25519.openSSHLine)\n"), [(plain, .revokedByFile), (cert, .revokedByFile)]),
            ("krl-hash", try lab.krl("hash", "hash: \(lab.rsa.sha256Fingerprint)\n"), [(rsa, .revokedByFile), (plain, .accepted)]),
            ("krl-serial", try lab.krl("serial", "serial: 42\n", authority: lab.path("ca.pub")), [(cert, .revokedByFile), (plain, .accepted)]),
            ("krl-range", try lab.krl("range", "serial: 40-50\n", authority: lab.path("ca.pub")), [(cert, .revokedByFile)]),
            ("krl-id", try lab.krl("id", "id: web-42\n", authority: lab.path("ca.pub")), [(cert, .revokedByFile)]),
            ("krl-any-ca", try lab.krl("any", "serial: 42\n", authority: "none"), [(cert, .revokedByFile)]),
            ("krl-ca-key", try lab.krl("ca-key", "key: \(lab.authority.openSSHLine)\n"), [(cert, .revokedByFile), (plain, .accepted)]),
            ("list-key", try lab.write("list-key", "# retired\n\(lab.rsa.openSSHLine) old\n"), [(rsa, .revokedByFile), (plain, .accepted)]),
            ("list-ca", try lab.write("list-ca", "\(lab.authority.openSSHLine)\n"), [(cert, .revokedByFile)]),
            ("missing", lab.path("absent.krl"), [(plain, .fileError), (cert, .fileError)]),
            ("truncated-krl", lab.path("truncated.krl"), [(plain, .fileError)]),
            ("bad-list", try lab.write("bad-list", "\(lab.spare.openSSHLine)\nnot a key\n"), [(plain, .fileError)]),
            ("unrelated", try lab.krl("unrelated", "serial: 43\nkey: \(lab.spare.openSSHLine)\n", authority: lab.path("ca.pub")),
             [(cert, .accepted), (plain, .accepted), (rsa, .accepted)]),
        ]
        var inventory = ""
        for (caseName, file, expected) in cases {
            for (algorithm, _) in expected {
                inventory += "Host \(caseName)-\(short(algorithm))\n  HostName 127.0.0.1\n  Port \(lab.port)\n"
                    + "  HostKeyAlgorithms \(algorithm)\n  RevokedHostKeys \(file)\n"
            }
        }
        let inventoryPath = try lab.write("inventory", inventory)
        let run = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "json", "--no-history", "--inventory", inventoryPath,
                                                                "--inventory-format", "ssh-config", "--known-hosts", knownHosts], limit: 180)
        let hosts = try XCTUnwrap(try? RecordedScan.decode(Data(run.stdout)), run.stderrText).hosts
        var checked = 0
        for (caseName, file, expected) in cases {
            for (algorithm, answer) in expected {
                let (ssh, transcript) = try lab.ssh(knownHosts: knownHosts, algorithm: algorithm, revokedHostKeys: file)
                XCTAssertEqual(ssh, answer, "\(caseName) \(algorithm): the real ssh said \(transcript)")
                let label = "\(caseName)-\(short(algorithm))"
                let host = try XCTUnwrap(hosts.first { $0.name == label }, label)
                let evidence = host.keys.flatMap(\.evidence).joined(separator: "\n")
                switch ssh {
                case .revokedByFile:
                    XCTAssertEqual(host.status, .revoked, label)
                    XCTAssertTrue(host.reason.contains("revoked by RevokedHostKeys \(file)"), "\(label): \(host.reason)")
                    XCTAssertTrue(evidence.contains("RevokedHostKeys \(file) revokes") || evidence.contains("\(file):"), "\(label): \(evidence)")
                case .fileError:
                    XCTAssertEqual(host.status, .error, label)
                    XCTAssertEqual(host.error?.stage, "host-key", label)
                    XCTAssertTrue(host.error?.message.contains(file) == true, "\(label): \(host.error?.message ?? "no error")")
                case .accepted:
                    if host.status == .revoked {
                        XCTAssertTrue(host.stricterThanSSH.contains(.keyNotNegotiated),
                                      "\(label): louder than ssh only where documented: another key the server holds is revoked")
                    } else {
                        XCTAssertTrue(host.status == .trusted, "\(label): ssh accepts, fleettrust says \(host.status)")
                    }
                case .revokedByKnownHosts, .other:
                    XCTFail("\(label): unexpected ssh answer \(ssh)")
                }
                checked += 1
            }
        }
        XCTAssertEqual(checked, 23)
        XCTAssertEqual(hosts.first { $0.name == "unrelated-plain" }?.status, .trusted, "an unrelated KRL revokes nothing")
        XCTAssertEqual(hosts.first { $0.name == "krl-serial-plain" }?.status, .revoked,
                       "the certificate the server also holds is revoked: an alarm even where ssh meets the plain key")
        XCTAssertEqual(run.status, 2, "revoked hosts make the scan exit 2")

        // A replay of the recorded scan judges against the same files and says the same.
        let recorded = try lab.write("scan.json", run.stdoutText)
        let replay = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "json", "--replay", recorded,
                                                                   "--known-hosts", knownHosts], limit: 120)
        let replayed = try XCTUnwrap(try? RecordedScan.decode(Data(replay.stdout)), replay.stderrText).hosts
        XCTAssertEqual(replayed.map(\.status), hosts.map(\.status))
    }
}
