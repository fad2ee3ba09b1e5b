import FleetTrustCore
import FleetTrustTestFleet
import Foundation
import XCTest

/// The `ca` policy, CA pins and the certificate audit against real sshd serving real certificates
/// (valid and never expiring, expired, not yet valid, wrong principals, empty principals, SHA-1
/// signed by a second CA), and the real `ssh` accepting what connect hands it under `ca`.
final class CertificatePolicyTests: XCTestCase {
    func testTheCAPolicyTrustsOnlyValidCertificatesFromThePinnedCAAndAuditsEveryCertificate() throws {
        let lab = try TrustOracleLab()
        defer { lab.stop() }
        let directory = lab.directory.path
        let variants: [TrustOracleLab.CertificateVariant] = [.valid, .expired, .notYetValid, .otherPrincipal, .emptyPrincipals, .sha1CA]
        var config = ""
        for variant in variants {
            config += "Host \(variant.rawValue)\n  HostName 127.0.0.1\n  Port \(lab.ports[variant]!)\n  HostKeyAlias foo.example\n"
        }
        try config.write(toFile: directory + "/inventory", atomically: true, encoding: .utf8)
        try "foo.example ca:\(lab.authority.sha256Fingerprint) ca:\(lab.rsaAuthority.sha256Fingerprint)\n"
            .write(toFile: directory + "/pins", atomically: true, encoding: .utf8)
        try "* ca\n".write(toFile: directory + "/policy", atomically: true, encoding: .utf8)
        try "".write(toFile: directory + "/empty_known_hosts", atomically: true, encoding: .utf8)
        let run = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "json", "--inventory", directory + "/inventory",
                                                                "--inventory-format", "ssh-config", "--known-hosts", directory + "/empty_known_hosts",
                                                                "--pins", directory + "/pins", "--policy", directory + "/policy"], limit: 120)
        let hosts = try XCTUnwrap(try? RecordedScan.decode(Data(run.stdout)), run.stderrText).hosts
        func host(_ variant: TrustOracleLab.CertificateVariant) throws -> RecordedScan.Host {
            try XCTUnwrap(hosts.first { $0.name == variant.rawValue })
        }
        func certificate(_ variant: TrustOracleLab.CertificateVariant) throws -> ScanReport.Certificate {
            try XCTUnwrap(try host(variant).keys.first { $0.certificate != nil }?.certificate, variant.rawValue)
        }
        let expectations: [(TrustOracleLab.CertificateVariant, HostStatus, [CertificateWarning])] = [
            (.valid, .trusted, [.noExpiry]),
            (.expired, .pinMismatch, [.expired]),
            (.notYetValid, .pinMismatch, [.notYetValid]),
            (.otherPrincipal, .pinMismatch, [.noExpiry, .principalMismatch]),
            (.emptyPrincipals, .trusted, [.noExpiry]),
            (.sha1CA, .pinMismatch, [.noExpiry, .sha1Signature]),
        ]
        for (variant, status, warnings) in expectations {
            XCTAssertEqual(try host(variant).status, status, variant.rawValue)
            XCTAssertEqual(try host(variant).policy, "ca", variant.rawValue)
            XCTAssertEqual(try certificate(variant).warnings, warnings, variant.rawValue)
        }
        XCTAssertEqual(try host(.valid).method, "ca-pin")
        XCTAssertNil(try certificate(.valid).expiresInDays, "a certificate without -V never expires")
        XCTAssertLessThan(try XCTUnwrap(try certificate(.expired).expiresInDays), -365)
        XCTAssertEqual(run.status, 2, "pin-mismatch hosts make the scan exit 2")

        // What connect hands ssh under `ca`: a @cert-authority line for the pinned CA. The real ssh accepts it.
        let handed = directory + "/connect_known_hosts"
        try "@cert-authority foo.example \(lab.authority.openSSHLine)\n".write(toFile: handed, atomically: true, encoding: .utf8)
        let ssh = try lab.sshVerdict(knownHosts: handed, host: "127.0.0.1", port: lab.ports[.valid]!, alias: "foo.example",
                                     algorithm: "ssh-ed25519-cert-v01@openssh.com", variant: .valid)
        XCTAssertEqual(ssh.verdict, .trustedByCA, ssh.messages)
        let refused = try lab.sshVerdict(knownHosts: handed, host: "127.0.0.1", port: lab.ports[.expired]!, alias: "foo.example",
                                         algorithm: "ssh-ed25519-cert-v01@openssh.com", variant: .expired)
        XCTAssertNotEqual(refused.verdict, .trustedByCA, "ssh refuses the expired certificate too: \(refused.messages)")
    }
}
