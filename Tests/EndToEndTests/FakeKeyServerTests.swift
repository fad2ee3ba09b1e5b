import Foundation
import XCTest
import FleetTrustTestFleet

/// The fake key server against the three clients it must serve, and the rows of ORACLE-FINDINGS.md
/// as assertions: what the real `ssh` 9.2 does with forged, undecodable and odd certificates,
/// SHA-1-only and short RSA keys, and which of several keys it meets.
final class FakeKeyServerTests: XCTestCase {
    private static let certificate = "-cert-v01@openssh.com"
    private var lab: ServerLab!
    private var servers: [FakeKeyServer] = []

    override func setUpWithError() throws {
        lab = try ServerLab()
    }

    override func tearDown() {
        for server in servers { server.stop() }
        servers = []
        lab?.stop()
    }

    private func serve(_ keys: [FakeHostKey]) throws -> FakeKeyServer {
        let server = try FakeKeyServer(keys: keys)
        servers.append(server)
        return server
    }

    private func plain(_ name: String, _ algorithms: [String]) throws -> FakeHostKey {
        try FakeHostKey.plain(lab.path(name), algorithms: algorithms)
    }

    private func certificate(of key: String, by ca: String, tag: String, host: Bool = true, signatureAlgorithm: String? = nil) throws -> [UInt8] {
        let path = try KeyFiles.certify(publicKeyPath: lab.path(key) + ".pub", caPath: lab.path(ca), identity: tag, host: host,
                                        principals: ["127.0.0.1"], signatureAlgorithm: signatureAlgorithm,
                                        output: lab.path("\(tag)-cert.pub"))
        return try KeyFiles.blob(publicKeyFile: path)
    }

    private static func certificateAlgorithms(_ key: String) -> [String] {
        switch key {
        case "ed": return ["ssh-ed25519" + certificate]
        case "ec": return ["ecdsa-sha2-nistp256" + certificate]
        default: return ["rsa-sha2-512" + certificate, "rsa-sha2-256" + certificate]
        }
    }

    private static let plainAlgorithms = ["ed": ["ssh-ed25519"], "ec": ["ecdsa-sha2-nistp256"], "rsa": ["rsa-sha2-512", "rsa-sha2-256"]]

    /// Runs the real ssh with a throw-away ssh_config: `known` lines (`NAME` stands for `[127.0.0.1]:port`).
    private func ssh(_ server: FakeKeyServer, known: [String], options: [String] = [], address: String = "127.0.0.1") throws -> SSHOracle.Handshake {
        let name = "[\(address)]:\(server.port)"
        let knownHosts = lab.path("kh-\(UUID().uuidString.prefix(8))")
        try known.map { $0.replacingOccurrences(of: "NAME", with: name) + "\n" }.joined().write(toFile: knownHosts, atomically: true, encoding: .utf8)
        let config = lab.path("config-\(UUID().uuidString.prefix(8))")
        try """
            Host fake
              HostName \(address)
              Port \(server.port)
            \(options.map { "  " + $0 }.joined(separator: "\n"))
            Host *
              UserKnownHostsFile \(knownHosts)
              GlobalKnownHostsFile /dev/null

            """.write(toFile: config, atomically: true, encoding: .utf8)
        return try SSHOracle.handshake(host: "fake", config: config)
    }

    private func line(_ name: String) throws -> String { try lab.publicLine(name) }

    func testRealSSHAcceptsEveryKeyTypeAndSignatureAlgorithm() throws {
        let server = try serve([try plain("ed", ["ssh-ed25519"]), try plain("ec", ["ecdsa-sha2-nistp256"]),
                                try plain("ec384", ["ecdsa-sha2-nistp384"]), try plain("rsa", ["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"])])
        let known = try ["ed", "ec", "ec384", "rsa"].map { "NAME " + (try line($0)) }
        for algorithm in ["ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"] {
            let outcome = try ssh(server, known: known, options: ["HostKeyAlgorithms \(algorithm)"])
            XCTAssertEqual(outcome.finding, .accepted, "\(algorithm): \(outcome.finalMessage)\n\(server.log)")
            XCTAssertEqual(outcome.hostKeyAlgorithm, algorithm)
        }
        for (key, ca) in [("ed", "ca-ed"), ("ec", "ca-ec"), ("rsa", "ca-rsa")] {
            let blob = try certificate(of: key, by: ca, tag: "valid-\(key)")
            let certified = try serve([FakeHostKey(privateKeyPath: lab.path(key), presentedBlob: blob, algorithms: Self.certificateAlgorithms(key))])
            let outcome = try ssh(certified, known: ["@cert-authority NAME " + (try line(ca))])
            XCTAssertEqual(outcome.finding, .acceptedByCA, "\(key): \(outcome.finalMessage)")
            XCTAssertEqual(outcome.hostKeyAlgorithm, Self.certificateAlgorithms(key)[0])
        }
    }

    /// Rows 1-2: no fallback to the plain key, whatever known_hosts says; the text depends on the CA type.
    func testAForgedCertificateIsFatalWhateverKnownHostsSays() throws {
        for key in ["ed", "ec", "rsa"] {
            for ca in ["ed", "ec", "rsa"] {
                let forged = try OddCertificates.forged(try certificate(of: key, by: "ca-\(ca)", tag: "forged-\(key)-\(ca)"))
                let server = try serve([FakeHostKey(privateKeyPath: lab.path(key), presentedBlob: forged, algorithms: Self.certificateAlgorithms(key)),
                                        try plain(key, Self.plainAlgorithms[key]!)])
                for known in [["NAME " + (try line(key))], [], ["@cert-authority NAME " + (try line("ca-\(ca)"))]] {
                    let outcome = try ssh(server, known: known)
                    XCTAssertEqual(outcome.finding, .incorrectSignature, "\(key) by \(ca) with \(known): \(outcome.transcript)")
                    XCTAssertTrue(outcome.finalMessage.hasSuffix(ca == "rsa" ? ": error in libcrypto" : ": incorrect signature"), outcome.finalMessage)
                    XCTAssertEqual(outcome.hostKeyAlgorithm, Self.certificateAlgorithms(key)[0])
                }
            }
        }
    }

    /// Rows 3-4: truncated, garbage-tailed and SHA-1-relabelled certificates all end in `invalid format`.
    func testUndecodableAndRelabelledCertificatesEndInInvalidFormat() throws {
        let ed = try certificate(of: "ed", by: "ca-ed", tag: "odd-ed")
        let rsa = try certificate(of: "rsa", by: "ca-rsa", tag: "odd-rsa")
        let edByRSA = try certificate(of: "ed", by: "ca-rsa", tag: "odd-ed-rsa")
        let cases: [(String, String, [UInt8], String)] = [
            ("ed", "truncated", try OddCertificates.undecodable(ed), "ca-ed"),
            ("ed", "garbage", try OddCertificates.trailingGarbage(ed), "ca-ed"),
            ("rsa", "truncated", try OddCertificates.undecodable(rsa), "ca-rsa"),
            ("rsa", "relabelled", try OddCertificates.relabelledToSHA1(rsa), "ca-rsa"),
            ("ed", "relabelled", try OddCertificates.relabelledToSHA1(edByRSA), "ca-rsa"),
        ]
        for (key, what, blob, ca) in cases {
            let server = try serve([FakeHostKey(privateKeyPath: lab.path(key), presentedBlob: blob, algorithms: Self.certificateAlgorithms(key)),
                                    try plain(key, Self.plainAlgorithms[key]!)])
            for known in [["NAME " + (try line(key))], [], ["@cert-authority NAME " + (try line(ca))]] {
                let outcome = try ssh(server, known: known)
                XCTAssertEqual(outcome.finding, .invalidFormat, "\(what) \(key) with \(known): \(outcome.transcript)")
                XCTAssertTrue(outcome.finalMessage.hasSuffix(": invalid format"), outcome.finalMessage)
            }
        }
    }

    /// Rows 5-9: certificates that verify but fail the policy are judged as their plain key.
    func testPolicyFailuresFallBackToThePlainKey() throws {
        let user = try certificate(of: "ed", by: "ca-ed", tag: "user", host: false)
        let sha1 = try certificate(of: "rsa", by: "ca-rsa", tag: "sha1", signatureAlgorithm: "ssh-rsa")
        for (key, blob, ca, note) in [("ed", user, "ca-ed", "Certificate invalid: not a host certificate"),
                                      ("rsa", sha1, "ca-rsa", "Certificate signed with disallowed algorithm")] {
            let server = try serve([FakeHostKey(privateKeyPath: lab.path(key), presentedBlob: blob, algorithms: Self.certificateAlgorithms(key)),
                                    try plain(key, Self.plainAlgorithms[key]!)])
            let onlyCA = try ssh(server, known: ["@cert-authority NAME " + (try line(ca))])
            XCTAssertEqual(onlyCA.finding, .unknown, onlyCA.transcript)
            XCTAssertTrue(onlyCA.certificateNotes.contains(note), "\(onlyCA.certificateNotes)")
            XCTAssertTrue(onlyCA.transcript.contains("is known and matches the"), "the CA match is printed before the rejection")
            let withPlain = try ssh(server, known: ["@cert-authority NAME " + (try line(ca)), "NAME " + (try line(key))])
            XCTAssertEqual(withPlain.finding, .accepted, withPlain.transcript)
        }
    }

    /// Rows 11-14.
    func testSHA1OnlyRSAIsNotNegotiatedAndShortRSAIsFatal() throws {
        let sha1Only = try serve([try plain("rsa", ["ssh-rsa"])])
        for known in [["NAME " + (try line("rsa"))], []] {
            let outcome = try ssh(sha1Only, known: known)
            XCTAssertEqual(outcome.finding, .noMatchingHostKeyType, outcome.transcript)
            XCTAssertTrue(outcome.finalMessage.hasSuffix("no matching host key type found. Their offer: ssh-rsa"), outcome.finalMessage)
        }
        XCTAssertEqual(try ssh(sha1Only, known: ["NAME " + (try line("rsa"))], options: ["HostKeyAlgorithms +ssh-rsa"]).finding, .accepted)

        let short = try serve([try plain("rsa768", ["rsa-sha2-512", "rsa-sha2-256"])])
        for known in [["NAME " + (try line("rsa768"))], [], ["NAME " + (try line("rsa"))]] {
            let outcome = try ssh(short, known: known)
            XCTAssertEqual(outcome.finding, .invalidKeyLength, outcome.transcript)
            XCTAssertTrue(outcome.finalMessage.hasSuffix(": Invalid key length"), outcome.finalMessage)
        }
    }

    /// Rows 15-20: with the Ed25519 key recorded, ssh keeps its default order, so it meets any
    /// certificate first; an untrusted one falls back to its own (other) plain key: changed.
    func testWithEd25519RecordedSSHMeetsTheCertificateFirst() throws {
        let untrusted = try certificate(of: "ec", by: "ca-untrusted", tag: "untrusted-ec")
        let server = try serve([FakeHostKey(privateKeyPath: lab.path("ec"), presentedBlob: untrusted, algorithms: Self.certificateAlgorithms("ec")),
                                try plain("ed", ["ssh-ed25519"]), try plain("ec", ["ecdsa-sha2-nistp256"])])
        let ed = "NAME " + (try line("ed")), ec = "NAME " + (try line("ec"))
        let changed = try ssh(server, known: [ed])
        XCTAssertEqual(changed.finding, .changed, changed.transcript)
        XCTAssertEqual(changed.hostKeyAlgorithm, "ecdsa-sha2-nistp256" + Self.certificate)
        XCTAssertEqual(try ssh(server, known: []).finding, .unknown)
        XCTAssertEqual(try ssh(server, known: [ed, ec]).finding, .accepted)
        let restricted = try ssh(server, known: [ed], options: ["HostKeyAlgorithms ssh-ed25519"])
        XCTAssertEqual(restricted.finding, .accepted)
        XCTAssertEqual(restricted.hostKeyAlgorithm, "ssh-ed25519")
        XCTAssertEqual(try ssh(server, known: [ed], options: ["HostKeyAlgorithms ecdsa-sha2-nistp256"]).finding, .changed)
        // Only ECDSA recorded: ssh moves the recorded type to the front and meets its certificate, then the plain key.
        XCTAssertEqual(try ssh(server, known: [ec]).finding, .accepted)
    }

    /// Row 27: a bare-name @revoked for a non-22 port prints the REVOKED banner, then ends unknown.
    func testRevokedBareNameOnANon22PortEndsUnknown() throws {
        let server = try serve([try plain("ed", ["ssh-ed25519"])])
        let outcome = try ssh(server, known: ["@revoked 127.0.0.1 " + (try line("ed"))])
        XCTAssertEqual(outcome.finding, .unknown, outcome.transcript)
        XCTAssertTrue(outcome.transcript.contains("was revoked and you have requested strict checking"))
        XCTAssertEqual(SSHOracle.classify(outcome.transcript), .unknown, "the old API agrees")
        XCTAssertEqual(try ssh(server, known: ["@revoked NAME " + (try line("ed")), "NAME " + (try line("ed"))]).finding, .revoked)
    }

    /// The project's prober (its own key-exchange client for certificates, libssh for plain keys)
    /// fetches every key a fake server serves, on one of many addresses of one server.
    func testTheProjectsProberFetchesEveryKeyFromAFakeServer() throws {
        let blob = try certificate(of: "ed", by: "ca-ed", tag: "prober")
        let server = try FakeKeyServer(keys: [FakeHostKey(privateKeyPath: lab.path("ed"), presentedBlob: blob, algorithms: Self.certificateAlgorithms("ed")),
                                              try plain("ed", ["ssh-ed25519"]), try plain("ec", ["ecdsa-sha2-nistp256"]),
                                              try plain("rsa", ["rsa-sha2-512", "rsa-sha2-256"])],
                                       addresses: ["127.0.0.1", "127.10.250.1"])
        servers.append(server)
        let inventory = lab.path("prober.txt")
        try "127.10.250.1:\(server.port)\n".write(toFile: inventory, atomically: true, encoding: .utf8)
        let run = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "json", "--inventory", inventory,
                                                                "--known-hosts", "/dev/null", "--timeout", "10"])
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.stdout)) as? [String: Any], run.stderrText)
        let host = try XCTUnwrap((document["hosts"] as? [[String: Any]])?.first)
        let types = Set((host["keys"] as? [[String: Any]] ?? []).compactMap { $0["type"] as? String })
        XCTAssertEqual(types, ["ssh-ed25519-cert-v01@openssh.com", "ssh-ed25519", "ecdsa-sha2-nistp256", "ssh-rsa"], "\(host)\n\(server.log)")
        XCTAssertEqual(server.log, "", "the server logged no errors")
        let pid = server.pid
        server.stop()
        XCTAssertNotEqual(kill(pid, 0), 0, "stop() ended the server process")
    }
}
