import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// Servers that send a key in an encoding OpenSSH reads as another key's bytes (an RSA modulus
/// with an extra leading zero), or a certificate OpenSSH refuses outright (a NUL in the key id, an
/// RSA-768 CA), served by the project's fake key server. For each, fleettrust's verdict is checked
/// against what the real `ssh -o StrictHostKeyChecking=yes` decides on the same server with the
/// same known_hosts, and fingerprints against `ssh-keygen -lf`.
final class KeyEncodingOracleTests: XCTestCase {
    private static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("FleetTrustCoreTests/Fixtures/Keys").path

    private var servers: [FakeKeyServer] = []
    private var directory = ""

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ft-key-encoding-\(getpid())-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        for server in servers { server.stop() }
        servers = []
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func fixture(_ name: String) -> String { "\(Self.fixtures)/\(name)" }
    private func path(_ name: String) -> String { "\(directory)/\(name)" }

    /// One fake server per host name; the ssh_config both `ssh` and the scan read names each one.
    private func start(_ hosts: [(name: String, keys: [FakeHostKey])], knownHosts: String) throws -> String {
        var config = ""
        for host in hosts {
            let server = try FakeKeyServer(keys: host.keys)
            servers.append(server)
            config += "Host \(host.name)\n  HostName 127.0.0.1\n  Port \(server.port)\n"
        }
        config += "Host *\n  UserKnownHostsFile \(knownHosts)\n  GlobalKnownHostsFile /dev/null\n"
        try config.write(toFile: path("config"), atomically: true, encoding: .utf8)
        return path("config")
    }

    private func port(of index: Int) -> Int { servers[index].port }

    private func scan(config: String, knownHosts: String) throws -> [String: RecordedScan.Host] {
        let run = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "json", "--inventory", config, "--inventory-format", "ssh-config",
                                                                "--known-hosts", knownHosts, "--timeout", "10"], limit: 120)
        let report = try XCTUnwrap(try? RecordedScan.decode(Data(run.stdout)), "no scan document: \(run.stderrText)")
        return Dictionary(report.hosts.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    private func sshKeygenFingerprint(_ file: String) throws -> String {
        String(try Tool.run("/usr/bin/ssh-keygen", ["-lf", file]).stdout.split(separator: " ")[1])
    }

    func testAPaddedRSAKeyIsTheKeySshSeesRevokedTrustedOrNewAndTOFUDoesNotSaveItRevoked() throws {
        let canonical = try KeyFiles.line(publicKeyFile: fixture("rsa2048.pub"))
        let padded = try OddKeys.zeroPaddedRSA(try KeyFiles.blob(publicKeyFile: fixture("rsa2048.pub")))
        let rsa = ["rsa-sha2-512", "rsa-sha2-256"]
        let knownHosts = path("known_hosts")
        let config = try start([("padded", [FakeHostKey(privateKeyPath: fixture("rsa2048"), presentedBlob: padded, algorithms: rsa)])],
                               knownHosts: knownHosts)
        let fingerprint = try sshKeygenFingerprint(fixture("rsa2048.pub"))
        let recordedName = "[127.0.0.1]:\(port(of: 0))"
        let paddedLine = KeyFiles.line(blob: padded)

        struct Situation { var label: String; var knownHosts: String; var ssh: SSHOracle.Finding; var status: HostStatus }
        let situations = [
            Situation(label: "nothing recorded", knownHosts: "", ssh: .unknown, status: .new),
            Situation(label: "recorded plainly", knownHosts: "\(recordedName) \(canonical)\n", ssh: .accepted, status: .trusted),
            Situation(label: "recorded padded", knownHosts: "\(recordedName) \(paddedLine)\n", ssh: .accepted, status: .trusted),
            Situation(label: "revoked plainly", knownHosts: "@revoked * \(canonical)\n", ssh: .revoked, status: .revoked),
            Situation(label: "recorded, revoked padded", knownHosts: "\(recordedName) \(canonical)\n@revoked * \(paddedLine)\n",
                      ssh: .revoked, status: .revoked),
        ]
        for situation in situations {
            try situation.knownHosts.write(toFile: knownHosts, atomically: true, encoding: .utf8)
            let ssh = try SSHOracle.handshake(host: "padded", config: config)
            XCTAssertEqual(ssh.finding, situation.ssh, "\(situation.label): ssh \(ssh.finalMessage)\n\(ssh.transcript)")
            let row = try XCTUnwrap(try scan(config: config, knownHosts: knownHosts)["padded"], situation.label)
            XCTAssertEqual(row.status, situation.status, "\(situation.label): \(row.reason)")
            XCTAssertEqual(row.keys.map(\.fingerprint), [fingerprint], "\(situation.label): the fingerprint ssh-keygen -l prints")
            XCTAssertEqual(row.keys.first?.key, canonical, "\(situation.label): shown as the key it encodes")
        }

        // Trust on first use saves the key as ssh reads it, and never a revoked one.
        try "".write(toFile: knownHosts, atomically: true, encoding: .utf8)
        let saved = try ProgramRun.run(BuiltProducts.fleettrust, ["sync", "--inventory", config, "--inventory-format", "ssh-config",
                                                                 "--known-hosts", knownHosts, "--hash-known-hosts", "no",
                                                                 "--trust-on-first-use"], limit: 90)
        XCTAssertEqual(saved.status, 0, saved.stderrText)
        XCTAssertEqual(try String(contentsOfFile: knownHosts, encoding: .utf8), "\(recordedName) \(canonical)\n")
        XCTAssertEqual(try SSHOracle.handshake(host: "padded", config: config).finding, .accepted, "ssh trusts what was saved")

        let revoked = "@revoked * \(paddedLine)\n"
        try revoked.write(toFile: knownHosts, atomically: true, encoding: .utf8)
        let refused = try ProgramRun.run(BuiltProducts.fleettrust, ["sync", "--inventory", config, "--inventory-format", "ssh-config",
                                                                   "--known-hosts", knownHosts, "--hash-known-hosts", "no",
                                                                   "--trust-on-first-use"], limit: 90)
        XCTAssertNotEqual(refused.status, 0, "a revoked key is an alarm: \(refused.stdoutText)")
        XCTAssertEqual(try String(contentsOfFile: knownHosts, encoding: .utf8), revoked, "a revoked key is never saved")
        for server in servers { XCTAssertEqual(server.log, "", "the fake server logged no errors") }
    }

    /// Signatures over the exchange hash in forms OpenSSH accepts and RFC 8032 and SEC 1 do not: an
    /// Ed25519 S + L (OpenSSH's ref10 takes S modulo L) and ECDSA r and s each with a needless
    /// leading zero byte (`sshbuf_get_bignum2` skips it), from plain and security-key host keys.
    /// `ssh` accepts each key, so the scan says `trusted`, and `changed` when another key is
    /// recorded, as `ssh` does: never an alarm `ssh` does not raise, nor a quieter answer.
    func testSignaturesInFormsOnlyOpenSSHAcceptsAreJudgedAsSshJudgesThem() throws {
        var hosts: [(name: String, keys: [FakeHostKey])] = []
        var keyLines: [String: String] = [:]
        for (name, type, bits, securityKey) in [("ed25519", "ed25519", nil, false), ("p256", "ecdsa", 256, false), ("p384", "ecdsa", 384, false),
                                                ("p521", "ecdsa", 521, false), ("sk-ed25519", "ed25519", nil, true), ("sk-p256", "ecdsa", 256, true)] {
            try KeyFiles.generate(type: type, bits: bits, path: path(name))
            var key = try FakeHostKey.plain(path(name), algorithms: [try KeyFiles.line(publicKeyFile: path(name + ".pub")).split(separator: " ")[0].description])
            key.signatureForm = .openSSHLoose
            if securityKey {
                let file = try KeyFiles.securityKey(privateKeyPath: path(name), output: path(name + "-sk.pub"))
                key.presentedBlob = try KeyFiles.blob(publicKeyFile: file)
                key.algorithms = [type == "ed25519" ? "sk-ssh-ed25519@openssh.com" : "sk-ecdsa-sha2-nistp256@openssh.com"]
                keyLines[name] = try KeyFiles.line(publicKeyFile: file)
            } else {
                keyLines[name] = try KeyFiles.line(publicKeyFile: path(name + ".pub"))
            }
            hosts.append((name, [key]))
        }
        // The WebAuthn form of a security key's signature, which ssh accepts from a host key too.
        try KeyFiles.generate(type: "ecdsa", bits: 256, path: path("webauthn"))
        let webauthnFile = try KeyFiles.securityKey(privateKeyPath: path("webauthn"), output: path("webauthn-sk.pub"))
        var webauthn = FakeHostKey(privateKeyPath: path("webauthn"), presentedBlob: try KeyFiles.blob(publicKeyFile: webauthnFile),
                                   algorithms: ["sk-ecdsa-sha2-nistp256@openssh.com"])
        webauthn.signatureForm = .webauthn
        hosts.append(("webauthn", [webauthn]))
        keyLines["webauthn"] = try KeyFiles.line(publicKeyFile: webauthnFile)
        try KeyFiles.generate(type: "ed25519", path: path("other"))
        let other = try KeyFiles.line(publicKeyFile: path("other.pub"))
        let knownHosts = path("known_hosts")
        let config = try start(hosts, knownHosts: knownHosts)
        for (recorded, status, finding) in [(true, HostStatus.trusted, SSHOracle.Finding.accepted), (false, .changed, .changed)] {
            try hosts.indices.map { "[127.0.0.1]:\(port(of: $0)) \(recorded ? keyLines[hosts[$0].name]! : other)\n" }.joined()
                .write(toFile: knownHosts, atomically: true, encoding: .utf8)
            let rows = try scan(config: config, knownHosts: knownHosts)
            for host in hosts {
                let ssh = try SSHOracle.handshake(host: host.name, config: config)
                XCTAssertEqual(ssh.finding, finding, "\(host.name): ssh \(ssh.finalMessage)\n\(ssh.transcript)")
                let row = try XCTUnwrap(rows[host.name], host.name)
                XCTAssertEqual(row.status, status, "\(host.name), key \(recorded ? "recorded" : "not recorded"): \(row.reason)")
                XCTAssertEqual(row.keys.map(\.key), [keyLines[host.name]!], host.name)
            }
        }
        for server in servers { XCTAssertEqual(server.log, "", "the fake server logged no errors") }
    }

    /// A WebAuthn signature whose clientData binds another challenge than the exchange hash: `ssh`
    /// fails the connection, and the scan, with the key recorded, raises the alarm.
    func testAWebAuthnSignatureOverAnotherChallengeIsRefusedAsSshRefusesIt() throws {
        try KeyFiles.generate(type: "ecdsa", bits: 256, path: path("webauthn"))
        let file = try KeyFiles.securityKey(privateKeyPath: path("webauthn"), output: path("webauthn-sk.pub"))
        var key = FakeHostKey(privateKeyPath: path("webauthn"), presentedBlob: try KeyFiles.blob(publicKeyFile: file),
                              algorithms: ["sk-ecdsa-sha2-nistp256@openssh.com"])
        key.signatureForm = .webauthnOtherChallenge
        let knownHosts = path("known_hosts")
        let config = try start([("other-challenge", [key])], knownHosts: knownHosts)
        try "[127.0.0.1]:\(port(of: 0)) \(try KeyFiles.line(publicKeyFile: file))\n".write(toFile: knownHosts, atomically: true, encoding: .utf8)
        let ssh = try SSHOracle.handshake(host: "other-challenge", config: config)
        XCTAssertNotEqual(ssh.finding, .accepted, "ssh refuses it: \(ssh.finalMessage)")
        let row = try XCTUnwrap(try scan(config: config, knownHosts: knownHosts)["other-challenge"])
        XCTAssertEqual(row.status, .unverified, row.reason)
        XCTAssertEqual(row.error?.code, .badSignature, row.reason)
        for server in servers { XCTAssertEqual(server.log, "", "the fake server logged no errors") }
    }

    /// A key whose signature `ssh` refuses (a byte after it) and libssh would take: the key `ssh`
    /// meets is trusted, as `ssh` says; the other is never taken from libssh instead, and the
    /// scan names its type as not fetched, with the refused signature.
    func testAKeyWhoseSignatureSshRefusesIsNotFetchedThroughLibsshInstead() throws {
        try KeyFiles.generate(type: "ed25519", path: path("ed"))
        try KeyFiles.generate(type: "ecdsa", bits: 256, path: path("ec"))
        var ecdsa = try FakeHostKey.plain(path("ec"), algorithms: ["ecdsa-sha2-nistp256"])
        ecdsa.signatureForm = .trailingByte
        let knownHosts = path("known_hosts")
        let config = try start([("trailing", [try FakeHostKey.plain(path("ed"), algorithms: ["ssh-ed25519"]), ecdsa])], knownHosts: knownHosts)
        let lines = try ["ed.pub", "ec.pub"].map { "[127.0.0.1]:\(port(of: 0)) \(try KeyFiles.line(publicKeyFile: path($0)))\n" }
        try lines.joined().write(toFile: knownHosts, atomically: true, encoding: .utf8)

        XCTAssertEqual(try SSHOracle.handshake(host: "trailing", config: config).finding, .accepted, "ssh meets the Ed25519 key")
        let refused = try SSHOracle.handshake(host: "trailing", config: config, extraOptions: ["-o", "HostKeyAlgorithms=ecdsa-sha2-nistp256"])
        XCTAssertNotEqual(refused.finding, .accepted, "ssh refuses the ECDSA signature: \(refused.finalMessage)")
        let row = try XCTUnwrap(try scan(config: config, knownHosts: knownHosts)["trailing"])
        XCTAssertEqual(row.status, .trusted, row.reason)
        XCTAssertEqual(row.keys.map(\.type), ["ssh-ed25519"], "no ECDSA key from libssh")
        XCTAssertEqual(row.unfetchedKeys.map { "\($0.algorithm) \($0.error.code.rawValue)" }, ["ecdsa-sha2-nistp256 bad-signature"])
        for server in servers { XCTAssertEqual(server.log, "", "the fake server logged no errors") }
    }

    func testACertificateSshRefusesOutrightIsAnInvalidCertificate() throws {
        let plain = try FakeHostKey.plain(fixture("ed25519"), algorithms: ["ssh-ed25519"])
        func certificate(_ file: String) throws -> FakeHostKey {
            FakeHostKey(privateKeyPath: fixture("ed25519"), presentedBlob: try KeyFiles.blob(publicKeyFile: fixture(file)),
                        algorithms: ["ssh-ed25519-cert-v01@openssh.com"])
        }
        let knownHosts = path("known_hosts")
        let hosts = [("control", [try certificate("cert-valid.pub"), plain]),
                     ("nul-key-id", [try certificate("cert-key-id-nul.pub"), plain]),
                     ("rsa768-ca", [try certificate("cert-rsa768-ca.pub"), plain])]
        let config = try start(hosts, knownHosts: knownHosts)
        let key = try KeyFiles.line(publicKeyFile: fixture("ed25519.pub"))
        try hosts.indices.map { "[127.0.0.1]:\(port(of: $0)) \(key)\n" }.joined().write(toFile: knownHosts, atomically: true, encoding: .utf8)
        let rows = try scan(config: config, knownHosts: knownHosts)

        let control = try SSHOracle.handshake(host: "control", config: config)
        XCTAssertEqual(control.finding, .accepted, "the certificate builder makes certificates ssh reads: \(control.finalMessage)")
        XCTAssertEqual(rows["control"]?.status, .trusted, rows["control"]?.reason ?? "not reported")

        for (host, message) in [("nul-key-id", "invalid format"), ("rsa768-ca", "invalid certificate signing key")] {
            let ssh = try SSHOracle.handshake(host: host, config: config)
            XCTAssertTrue(ssh.finalMessage.hasPrefix("ssh_dispatch_run_fatal:") && ssh.finalMessage.hasSuffix(message),
                          "\(host): ssh fails the connection: \(ssh.finalMessage)\n\(ssh.transcript)")
            let row = try XCTUnwrap(rows[host], host)
            XCTAssertEqual(row.status, .invalidCertificate, "\(host): \(row.reason)")
            let certificate = row.keys.first { $0.type.hasSuffix("-cert-v01@openssh.com") }
            XCTAssertEqual(certificate?.verdict, .invalidCertificate, host)
        }
        for server in servers { XCTAssertEqual(server.log, "", "the fake server logged no errors") }
    }

    func testACertificateAuthorityWrittenPaddedVouchesAndRevokesAsSshDecides() throws {
        let certificate = FakeHostKey(privateKeyPath: fixture("ed25519"), presentedBlob: try KeyFiles.blob(publicKeyFile: fixture("cert-by-rsa-ca.pub")),
                                      algorithms: ["ssh-ed25519-cert-v01@openssh.com"])
        let knownHosts = path("known_hosts")
        let config = try start([("by-rsa-ca", [certificate, try FakeHostKey.plain(fixture("ed25519"), algorithms: ["ssh-ed25519"])])],
                               knownHosts: knownHosts)
        let padded = try KeyFiles.line(publicKeyFile: fixture("padded-ca-rsa2048.pub"))
        for (label, text, finding, status) in [
            ("CA written padded", "@cert-authority * \(padded)\n", SSHOracle.Finding.acceptedByCA, HostStatus.trusted),
            ("CA written padded and revoked padded", "@cert-authority * \(padded)\n@revoked * \(padded)\n", .revoked, .revoked),
        ] {
            try text.write(toFile: knownHosts, atomically: true, encoding: .utf8)
            let ssh = try SSHOracle.handshake(host: "by-rsa-ca", config: config)
            XCTAssertEqual(ssh.finding, finding, "\(label): ssh \(ssh.finalMessage)\n\(ssh.transcript)")
            let row = try XCTUnwrap(try scan(config: config, knownHosts: knownHosts)["by-rsa-ca"], label)
            XCTAssertEqual(row.status, status, "\(label): \(row.reason)")
        }
        for server in servers { XCTAssertEqual(server.log, "", "the fake server logged no errors") }
    }

    /// A plain key `ssh` cannot parse (an ECDSA point off its curve) fails `ssh`'s connection when
    /// it meets it; fleettrust never calls such a host trusted or new.
    func testAServerKeySshCannotParseIsNeverTrustedOrNew() throws {
        try KeyFiles.generate(type: "ecdsa", bits: 256, path: path("ecdsa"))
        var offCurve = try KeyFiles.blob(publicKeyFile: path("ecdsa.pub"))
        offCurve[offCurve.count - 1] ^= 1
        let knownHosts = path("known_hosts")
        let config = try start([("off-curve", [FakeHostKey(privateKeyPath: path("ecdsa"), presentedBlob: offCurve, algorithms: ["ecdsa-sha2-nistp256"])])],
                               knownHosts: knownHosts)
        for (label, text) in [("nothing recorded", ""),
                              ("the valid key recorded", "[127.0.0.1]:\(port(of: 0)) \(try KeyFiles.line(publicKeyFile: path("ecdsa.pub")))\n")] {
            try text.write(toFile: knownHosts, atomically: true, encoding: .utf8)
            let ssh = try SSHOracle.handshake(host: "off-curve", config: config)
            XCTAssertTrue(ssh.finalMessage.hasPrefix("ssh_dispatch_run_fatal:"), "\(label): ssh fails the connection: \(ssh.finalMessage)")
            let row = try XCTUnwrap(try scan(config: config, knownHosts: knownHosts)["off-curve"], label)
            XCTAssertFalse([HostStatus.trusted, .new].contains(row.status), "\(label): \(row.status.rawValue): \(row.reason)")
            XCTAssertTrue(row.keys.isEmpty, "\(label): no key is reported as proved")
        }
    }
}
