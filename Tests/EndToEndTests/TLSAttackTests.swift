import FleetTrustCore
import FleetTrustTestFleet
import Foundation
import XCTest

/// Servers built to be judged more kindly than OpenSSL judges them, each against a real
/// `openssl s_server`: a pinned certificate merely appended to a chain it is not part of, an
/// oversize leaf hiding a real one behind it, a leaf only for client authentication. None may
/// come out trusted.
final class TLSAttackTests: XCTestCase {
    private var lab: TLSTestLab!

    override func setUpWithError() throws { lab = try TLSTestLab() }
    override func tearDown() { lab?.stop() }

    private func pem(_ name: String) throws -> String { try String(contentsOfFile: lab.path(name + ".pem"), encoding: .utf8) }

    func testAppendedPinnedCertificatesOversizeLeavesAndClientOnlyLeavesAreNeverTrusted() throws {
        for name in ["root", "other-root", "leaf", "evil", "pinned-ca"] { try lab.key(name) }
        try lab.selfSigned("root", key: "root", subject: "fleettrust test root", ca: true)
        try lab.selfSigned("other-root", key: "other-root", subject: "another trusted root", ca: true)
        try lab.selfSigned("pinned-ca", key: "pinned-ca", subject: "the pinned CA", ca: true)
        try lab.signed("real-leaf", key: "leaf", subject: "localhost", by: "root", dnsNames: ["localhost"])
        try lab.signed("other-leaf", key: "evil", subject: "localhost", by: "other-root", dnsNames: ["localhost"])
        try lab.signed("client-leaf", key: "leaf", subject: "localhost", by: "root", dnsNames: ["localhost"],
                       extensions: ["extendedKeyUsage=clientAuth"])
        try lab.selfSigned("evil-self", key: "evil", subject: "localhost", dnsNames: ["localhost"])
        // A leaf of about 70 KB: more than fleettrust reads, less than OpenSSL's limit for a chain.
        try lab.selfSigned("oversize", key: "evil", subject: "localhost",
                           dnsNames: ["localhost"] + (0..<3000).map { "n\($0).padding.example" })
        try lab.write("anchors.pem", try pem("root") + pem("other-root"))
        try lab.write("appended-ca.pem", try pem("pinned-ca"))
        try lab.write("appended-leaf.pem", try pem("real-leaf"))
        try lab.write("behind-oversize.pem", try pem("real-leaf") + pem("root"))

        // A leaf from another trusted CA with the pinned CA appended, under `pinned`.
        let appendedCA = try lab.serve(certificate: "other-leaf", key: "evil", chain: "appended-ca")
        // An attacker's self-signed leaf with the real pinned leaf appended, under `pin-only`.
        let appendedLeaf = try lab.serve(certificate: "evil-self", key: "evil", chain: "appended-leaf")
        // The oversize leaf with the real leaf and its root behind it, pinned to the real leaf.
        let oversize = try lab.serve(certificate: "oversize", key: "evil", chain: "behind-oversize")
        // A leaf the CA issued for client authentication only.
        let clientOnly = try lab.serve(certificate: "client-leaf", key: "leaf")

        let endpoints = [appendedCA, appendedLeaf, oversize, clientOnly]
        try lab.write("endpoints", endpoints.map { "https://localhost:\($0)\n" }.joined())
        try lab.write("known_hosts", "")
        try lab.write("pins", """
            [localhost]:\(appendedCA) pin-sha256:\(try lab.spkiPin("pinned-ca"))
            [localhost]:\(appendedLeaf),[localhost]:\(oversize) pin-sha256:\(try lab.spkiPin("real-leaf"))

            """)
        try lab.write("policy", "[localhost]:\(appendedCA),[localhost]:\(oversize) pinned\n[localhost]:\(appendedLeaf) pin-only\n")
        let run = try ProgramRun.run(BuiltProducts.fleettrust, [
            "scan", "--format", "json", "--known-hosts", lab.path("known_hosts"), "--timeout", "3", "--inventory", lab.path("endpoints"),
            "--tls-ca-file", lab.path("anchors.pem"), "--pins", lab.path("pins"), "--policy", lab.path("policy")], limit: 120)
        let report = try XCTUnwrap(try? RecordedScan.decode(Data(run.stdout)), "no JSON: \(run.stderrText)")
        func status(_ port: Int) throws -> HostStatus {
            try XCTUnwrap(report.hosts.first { $0.name == "localhost:\(port)/tls" }, "no row for \(port)").status
        }
        XCTAssertEqual(try status(appendedCA), .pinMismatch, "a pinned CA outside the validated chain proves nothing")
        XCTAssertEqual(try status(appendedLeaf), .pinMismatch, "only the leaf of an unvalidated chain can satisfy a pin")
        XCTAssertEqual(try status(oversize), .error, "an unreadable leaf is not replaced by the certificate behind it")
        XCTAssertEqual(try status(clientOnly), .untrusted, "a client-authentication leaf does not authenticate a server")
        XCTAssertEqual(run.status, 2)
    }
}
