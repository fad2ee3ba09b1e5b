import FleetTrustTestFleet
import Foundation
import XCTest

/// The dashboard's TLS rows and the TLS trust flow, in tmux, against real `openssl s_server`s on
/// loopback, with the `openssl` CLI as the oracle for the `pin-sha256:` values.
final class TLSDashboardTests: XCTestCase {
    private var lab: TLSTestLab!
    private var terminal: DashboardTmux?
    private var fleet: TestFleet?

    override func setUpWithError() throws {
        lab = try TLSTestLab()
    }

    override func tearDown() {
        terminal?.stop()
        fleet?.stop()
        lab?.stop()
    }

    /// The screen line naming the endpoint `localhost:PORT/tls`.
    private func row(_ screen: String, _ port: Int) -> String {
        screen.split(separator: "\n").first { $0.contains("localhost:\(port)/tls ") }.map(String.init) ?? ""
    }

    /// Selects the endpoint on `port` by filtering on its unique port.
    private func select(_ terminal: DashboardTmux, _ port: Int) {
        terminal.send("/")
        terminal.type(":\(port)/")
        terminal.send("Enter")
        XCTAssertTrue(terminal.waitFor { $0.contains("1 shown") && self.row($0, port).contains("localhost:\(port)/tls") }.0,
                      terminal.capture())
    }

    /// Clears the filter: every endpoint is listed again.
    private func showAll(_ terminal: DashboardTmux) {
        terminal.send("/")
        terminal.send("Escape")
        XCTAssertTrue(terminal.waitFor { !$0.contains("1 shown") }.0, terminal.capture())
    }

    func testTLSRowsShowTheirStatusesAndTPinsASelfSignedPinOnlyEndpointAfterConfirmation() throws {
        for name in ["root", "leaf", "self", "other"] { try lab.key(name) }
        try lab.selfSigned("root", key: "root", subject: "fleettrust test root", ca: true)
        try lab.signed("ca-leaf", key: "leaf", subject: "localhost", by: "root", dnsNames: ["localhost"])
        try lab.selfSigned("self", key: "self", subject: "localhost", dnsNames: ["localhost"])
        try lab.selfSigned("other", key: "other", subject: "localhost", dnsNames: ["localhost"])
        let untrusted = try lab.serve(certificate: "self", key: "self")       // standard: self-signed, u
        let pinOnly = try lab.serve(certificate: "self", key: "self")         // pin-only, no pin yet: p
        let caSigned = try lab.serve(certificate: "ca-leaf", key: "leaf")     // test CA given with --tls-ca-file: T
        let mismatch = try lab.serve(certificate: "other", key: "other")      // pinned to another key: P
        let selfPin = try lab.spkiPin("self")
        let leafPin = try lab.spkiPin("ca-leaf")

        try lab.write("endpoints", "https://localhost:\(untrusted)\nhttps://localhost:\(pinOnly)\n"
                      + "tls://localhost:\(caSigned)\nhttps://localhost:\(mismatch)\n")
        let pinsBefore = "# the BMC's old key\n[localhost]:\(mismatch) pin-sha256:\(selfPin)\n"
        try lab.write("pins", pinsBefore)
        try lab.write("policy", "[localhost]:\(pinOnly) pin-only\n")
        try lab.write("known_hosts", "")
        // One real sshd next to the endpoints: its row stays an SSH row (a new host, its keys listed).
        let fleet = try TestFleet.start(hosts: 1)
        self.fleet = fleet
        let sshLabel = fleet.hosts[0].endpoints[0].label + " "
        let terminal = try DashboardTmux(arguments: ["--inventory", lab.path("endpoints"), "--inventory", fleet.inventoryPath,
                                                     "--known-hosts", lab.path("known_hosts"),
                                                     "--tls-ca-file", lab.path("root.pem"), "--pins", lab.path("pins"),
                                                     "--policy", lab.path("policy"), "--audit-log", lab.path("audit.jsonl"),
                                                     "--no-history", "--timeout", "5"], width: 200)
        self.terminal = terminal

        // The list: one row per endpoint, named host:port/tls, with its TLS status letter.
        let (listed, list) = terminal.waitFor { screen in
            [untrusted, pinOnly, caSigned, mismatch].allSatisfy { !self.row(screen, $0).isEmpty } && screen.contains(sshLabel)
                && !screen.contains("scanning")
        }
        XCTAssertTrue(listed, list)
        let sshRow = list.split(separator: "\n").first { $0.contains(sshLabel) }.map(String.init) ?? ""
        XCTAssertTrue(sshRow.contains("N new") && sshRow.contains("SHA256:") && !sshRow.contains("TLS"), sshRow)
        XCTAssertTrue(row(list, untrusted).contains("u untrusted"), row(list, untrusted))
        XCTAssertTrue(row(list, pinOnly).contains("p unpinned"), row(list, pinOnly))
        XCTAssertTrue(row(list, pinOnly).contains("pin-only"), row(list, pinOnly))
        XCTAssertTrue(row(list, caSigned).contains("T trusted"), row(list, caSigned))
        XCTAssertTrue(row(list, mismatch).contains("P pin-mismatch"), row(list, mismatch))
        // The protocol and days left of the earliest-expiring certificate, and the leaf's SPKI pin (middle cut).
        XCTAssertNotNil(row(list, untrusted).range(of: #" TLSv1\.3 36(49|50)d "#, options: .regularExpression), row(list, untrusted))
        XCTAssertNotNil(row(list, caSigned).range(of: #" TLSv1\.3 36(4|5)d "#, options: .regularExpression), row(list, caSigned))
        XCTAssertTrue(row(list, untrusted).contains(" pin-sha256:\(selfPin.prefix(12))"), row(list, untrusted))
        XCTAssertTrue(row(list, untrusted).contains("\(selfPin.suffix(8)) "), row(list, untrusted))
        XCTAssertTrue(row(list, caSigned).contains(" pin-sha256:\(leafPin.prefix(12))"), row(list, caSigned))

        // The detail view of the self-signed endpoint: the chain with the pin the openssl CLI computes.
        select(terminal, untrusted)
        terminal.send("Enter")
        let (detailed, detail) = terminal.waitFor { $0.contains("1. leaf CN=localhost") && $0.contains("sha256 ") }
        XCTAssertTrue(detailed, detail)
        XCTAssertTrue(detail.contains("(self-signed)"), detail)
        XCTAssertTrue(detail.contains("    pin-sha256:\(selfPin)"), "the leaf's pin is openssl's: \(selfPin)\n\(detail)")
        XCTAssertTrue(detail.contains("SAN DNS:localhost"), detail)
        terminal.send("Escape")
        XCTAssertTrue(terminal.waitFor { $0.contains("STATUS") && $0.contains("1 shown") }.0, terminal.capture())
        showAll(terminal)

        // t on the self-signed endpoint under the standard policy: before y it says the pin will not
        // make it trusted, and what would.
        select(terminal, untrusted)
        terminal.send("t")
        let (explained, explanation) = terminal.waitFor { $0.contains("y pins these fingerprints") }
        XCTAssertTrue(explained, explanation)
        XCTAssertTrue(explanation.contains("so after y the endpoint stays untrusted"), explanation)
        XCTAssertTrue(explanation.contains("'[localhost]:\(untrusted) pin-only'") && explanation.contains("--tls-ca-file"), explanation)
        terminal.send("n")
        XCTAssertTrue(terminal.waitFor { $0.contains("Cancelled; nothing was saved.") }.0, terminal.capture())
        showAll(terminal)

        // t on the pin-only endpoint: the confirmation shows the leaf's pin and certificate SHA-256; y pins it.
        select(terminal, pinOnly)
        terminal.send("t")
        let (asked, confirmation) = terminal.waitFor { $0.contains("y pins these fingerprints") }
        XCTAssertTrue(asked, confirmation)
        XCTAssertTrue(confirmation.contains("the pin alone decides, so after y this endpoint is trusted"), confirmation)
        XCTAssertTrue(confirmation.contains("saved as: [localhost]:\(pinOnly)"), confirmation)
        XCTAssertTrue(confirmation.contains("leaf public key  pin-sha256:\(selfPin)"), confirmation)
        let certificateSHA256 = try certificateFingerprint("self")
        XCTAssertTrue(confirmation.contains("certificate sha256 \(certificateSHA256)"), "openssl says \(certificateSHA256)\n\(confirmation)")
        terminal.send("y")
        let (trusted, after) = terminal.waitFor { self.row($0, pinOnly).contains("T trusted") }
        XCTAssertTrue(trusted, after)
        XCTAssertEqual(try String(contentsOfFile: lab.path("pins"), encoding: .utf8),
                       pinsBefore + "[localhost]:\(pinOnly) pin-sha256:\(selfPin)\n")
        let audit = try String(contentsOfFile: lab.path("audit.jsonl"), encoding: .utf8)
        let records = audit.split(separator: "\n")
        XCTAssertEqual(records.count, 1, audit)
        XCTAssertTrue(audit.contains("\"action\":\"pin\""), audit)
        XCTAssertTrue(audit.contains("\"new_fingerprints\":[\"pin-sha256:\(selfPin)\"]"), audit)
        XCTAssertTrue(audit.contains("\"names\":[\"[localhost]:\(pinOnly)\"]"), audit)
        showAll(terminal)

        // The pin-mismatch endpoint: t and p are refused and nothing is written.
        select(terminal, mismatch)
        terminal.send("t")
        let (refused, refusal) = terminal.waitFor { $0.contains("Nothing to trust:") }
        XCTAssertTrue(refused, refusal)
        XCTAssertTrue(refusal.contains("cannot be trusted here"), "t must not send anyone to p, which refuses too: \(refusal)")
        terminal.send("p")
        XCTAssertTrue(terminal.waitFor { $0.contains("Nothing to pin:") && $0.contains("is pin-mismatch; resolve that before pinning") }.0,
                      terminal.capture())
        showAll(terminal)

        // The CA-signed endpoint: t says it is already trusted; p offers its leaf's pin, and Esc writes nothing.
        select(terminal, caSigned)
        terminal.send("t")
        XCTAssertTrue(terminal.waitFor { $0.contains("Nothing to trust:") && $0.contains("is already trusted") }.0, terminal.capture())
        terminal.send("p")
        let (offered, pinScreen) = terminal.waitFor { $0.contains("y pins these fingerprints") }
        XCTAssertTrue(offered, pinScreen)
        XCTAssertTrue(pinScreen.contains("leaf public key  pin-sha256:\(leafPin)"), pinScreen)
        terminal.send("Escape")
        XCTAssertTrue(terminal.waitFor { $0.contains("Cancelled; nothing was saved.") }.0, terminal.capture())
        XCTAssertEqual(try String(contentsOfFile: lab.path("pins"), encoding: .utf8),
                       pinsBefore + "[localhost]:\(pinOnly) pin-sha256:\(selfPin)\n")
        XCTAssertEqual(try String(contentsOfFile: lab.path("audit.jsonl"), encoding: .utf8).split(separator: "\n").count, 1)

        terminal.send("q")
        XCTAssertTrue(terminal.waitFor { $0.contains(DashboardTmux.exitMarker) }.0, terminal.capture())
    }

    /// The certificate's SHA-256 as the openssl CLI prints it, lower-case hex without colons.
    private func certificateFingerprint(_ certificate: String) throws -> String {
        let run = try ProgramRun.run("/usr/bin/openssl", ["x509", "-in", lab.path(certificate + ".pem"), "-noout", "-fingerprint", "-sha256"])
        let value = run.stdoutText.split(separator: "=").last.map(String.init) ?? ""
        return value.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: ":", with: "").lowercased()
    }
}
