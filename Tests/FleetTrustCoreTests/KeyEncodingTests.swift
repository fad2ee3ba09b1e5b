import Foundation
import XCTest
import FleetTrustTestFleet
@testable import FleetTrustCore

/// Every key is read as OpenSSH 9.2 reads it (`sshkey_from_blob`): an odd encoding of a key is that
/// key (same fingerprint as `ssh-keygen -l` prints, equal to it everywhere), and what OpenSSH refuses
/// is refused. The fixtures are made once by `scripts/make-key-fixtures`; the real `ssh-keygen -l`
/// is asked about each of them here, so the expectations come from OpenSSH, not from the fixtures.
final class KeyEncodingTests: XCTestCase {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/Keys")

    private func path(_ name: String) -> String { Self.directory.appendingPathComponent(name).path }
    private func line(_ name: String) throws -> String { try String(contentsOfFile: path(name), encoding: .utf8) }
    /// The base64-decoded second field of a fixture: the blob exactly as written.
    private func blob(_ name: String) throws -> [UInt8] {
        try XCTUnwrap(Base64.decode(try line(name).split(whereSeparator: { $0 == " " || $0 == "\n" })[1]))
    }
    private func fixtures(_ prefix: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: Self.directory.path).filter { $0.hasPrefix(prefix) }.sorted()
    }

    /// `ssh-keygen -lf FILE`: the fingerprint it prints, or nil when it does not read the file as a key.
    private func sshKeygenFingerprint(_ name: String) throws -> String? {
        let run = try Tool.run("/usr/bin/ssh-keygen", ["-lf", path(name)])
        guard run.status == 0 else { return nil }
        return run.stdout.split(separator: " ").dropFirst().first.map(String.init)
    }

    /// The key each `same-*` fixture re-encodes.
    private func original(of name: String) -> String {
        if name.contains("rsa") { return "rsa2048.pub" }
        if name.contains("ed25519") { return "ed25519.pub" }
        if name.contains("ecdsa") { return "ecdsa256.pub" }
        return "dsa.pub"
    }

    func testEveryEncodingSshKeygenReadsIsTheSameKeyWithSshKeygensFingerprint() throws {
        let names = try fixtures("same-")
        XCTAssertEqual(names.count, 10)
        for name in names {
            let oracle = try sshKeygenFingerprint(name)
            let plain = try HostKey(openSSHLine: try line(original(of: name)))
            XCTAssertEqual(oracle, try sshKeygenFingerprint(original(of: name)), "\(name): ssh-keygen reads it as the original key")
            let key = try HostKey(openSSHLine: try line(name))
            XCTAssertEqual(key.sha256Fingerprint, oracle, name)
            XCTAssertEqual(key, plain, "\(name) is equal to the key it encodes")
            XCTAssertEqual(key.openSSHLine, plain.openSSHLine, "\(name) is written as the key it encodes")
            XCTAssertEqual(key.bits, plain.bits, name)
            XCTAssertEqual(try HostKey(blob: try blob(name)), plain, "\(name) as a server's K_S")
        }
    }

    func testWellFormedKeysKeepTheirBytesAndSshKeygensFingerprint() throws {
        for name in ["ed25519.pub", "ecdsa256.pub", "ecdsa384.pub", "ecdsa521.pub", "rsa2048.pub", "dsa.pub", "cert-valid.pub"] {
            let key = try HostKey(openSSHLine: try line(name))
            XCTAssertEqual(key.blob, try blob(name), "\(name): a canonical encoding is kept as it is")
            XCTAssertEqual(key.sha256Fingerprint, try sshKeygenFingerprint(name), name)
        }
    }

    func testEveryEncodingSshKeygenRefusesIsRefusedAndItsKnownHostsLineIgnored() throws {
        let names = try fixtures("refused-") + ["cert-key-id-nul.pub", "cert-principal-nul.pub", "cert-rsa768-ca.pub", "cert-rsa768-key.pub"]
        XCTAssertEqual(names.count, 15)
        for name in names {
            XCTAssertNil(try sshKeygenFingerprint(name), "\(name): ssh-keygen refuses it")
            XCTAssertThrowsError(try HostKey(openSSHLine: try line(name)), name)
            if name != "refused-ecdsa-name-mismatch.pub" {  // its blob is a good key; only the line misnames it
                XCTAssertThrowsError(try HostKey(blob: try blob(name)), "\(name) as a server's K_S")
            }
            let file = TestKeys.file("host.example \(try line(name))")
            XCTAssertNil(file.lines[0].entry, "\(name): ssh ignores the known_hosts line")
        }
    }

    func testRefusalsNameOpenSSHsReason() throws {
        func error(_ name: String) throws -> HostKey.ParseError? {
            do {
                _ = try HostKey(openSSHLine: try line(name))
                return nil
            } catch let error as HostKey.ParseError {
                return error
            }
        }
        XCTAssertEqual(try error("refused-rsa-negative-modulus.pub"), .negativeInteger)
        XCTAssertEqual(try error("refused-rsa-modulus-too-large.pub"), .integerTooLarge)
        XCTAssertEqual(try error("refused-rsa-trailing-bytes.pub"), .trailingBytes)
        XCTAssertEqual(try error("refused-rsa-name-embedded-nul.pub"), .embeddedNUL("key type"))
        XCTAssertEqual(try error("refused-ecdsa-short-name.pub"), .unknownType("ECDSA"))
        XCTAssertEqual(try error("refused-ecdsa-point-off-curve.pub"), .invalidECPoint)
        XCTAssertEqual(try error("refused-ecdsa-point-compressed.pub"), .invalidECPoint)
        XCTAssertEqual(try error("refused-ecdsa-curve-mismatch.pub"), .curveMismatch("nistp384"))
        XCTAssertEqual(try error("refused-ecdsa-name-mismatch.pub"), .typeMismatch(named: "ecdsa-sha2-nistp384", encoded: "ecdsa-sha2-nistp256"))
        XCTAssertEqual(try error("cert-key-id-nul.pub"), .embeddedNUL("key id"))
        XCTAssertEqual(try error("cert-principal-nul.pub"), .embeddedNUL("principal"))
        XCTAssertEqual(try error("cert-rsa768-key.pub"), .rsaKeyTooShort(bits: 768))
        guard case .invalidSigningKey(let why)? = try error("cert-rsa768-ca.pub") else { return XCTFail("an RSA-768 CA signs nothing") }
        XCTAssertTrue(why.contains("768 bits"), why)
    }

    func testShortRSAKeyIsReadForReportingButItsKnownHostsLineIsIgnored() throws {
        XCTAssertNil(try sshKeygenFingerprint("rsa768.pub"))
        let key = try HostKey(openSSHLine: try line("rsa768.pub"))
        XCTAssertEqual(key.bits, 768)
        XCTAssertNil(TestKeys.file("host.example \(try line("rsa768.pub"))").lines[0].entry)
    }

    func testRevokedLineWithAPaddedModulusRevokesTheKey() throws {
        let key = try HostKey(openSSHLine: try line("rsa2048.pub"))
        let padded = try line("same-rsa-modulus-padded.pub")
        XCTAssertEqual(try TestKeys.verdict("host.example \(key.openSSHLine)\n@revoked * \(padded)", key, host: "host.example"), .revoked)
        XCTAssertEqual(try TestKeys.verdict("host.example \(padded)", key, host: "host.example"), .trusted)
        let fromServer = try HostKey(blob: try blob("same-rsa-modulus-padded.pub"))
        XCTAssertEqual(try TestKeys.verdict("@revoked * \(key.openSSHLine)", fromServer, host: "host.example"), .revoked,
                       "a server sending the revoked key padded is still revoked")
    }

    func testACertificateAuthorityWrittenPaddedVouchesForItsCertificatesAndRevokesThem() throws {
        let certificate = try HostKey(openSSHLine: try line("cert-by-rsa-ca.pub"))
        let padded = try line("padded-ca-rsa2048.pub")
        XCTAssertEqual(try HostCertificate(certificate).signatureKey, try HostKey(openSSHLine: try line("ca-rsa2048.pub")))
        XCTAssertEqual(try TestKeys.verdict("@cert-authority * \(padded)", certificate, host: "127.0.0.1"), .trustedByCA)
        XCTAssertEqual(try TestKeys.verdict("@cert-authority * \(padded)\n@revoked * \(padded)", certificate, host: "127.0.0.1"), .revoked)
    }

    /// A KRL (PROTOCOL.krl) with one section.
    private func krl(section type: UInt8, _ data: [UInt8]) -> [UInt8] {
        var writer = SSHWireWriter()
        writer.writeRaw(Array("SSHKRL\n".utf8) + [0])
        writer.writeUInt32(1)
        writer.writeUInt64(1)
        writer.writeUInt64(0)
        writer.writeUInt64(0)
        writer.writeString([])
        writer.writeString([])
        writer.writeByte(type)
        writer.writeString(data)
        return writer.bytes
    }

    /// `ssh-keygen -Q -f KRL KEY`: whether OpenSSH finds the key revoked.
    private func sshKeygenRevokes(_ krl: [UInt8], _ keyFile: String) throws -> Bool {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ft-krl-\(getpid())-\(UUID().uuidString.prefix(8))").path
        try Data(krl).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        return try Tool.run("/usr/bin/ssh-keygen", ["-Q", "-f", file, path(keyFile)]).stdout.contains("REVOKED")
    }

    func testAKRLNamingItsCAPaddedRevokesItsCertificatesAsSshDoes() throws {
        var section = SSHWireWriter()
        section.writeString(try blob("padded-ca-rsa2048.pub"))
        section.writeString([])
        var ids = SSHWireWriter()
        ids.writeString(try HostCertificate(try HostKey(openSSHLine: try line("cert-by-rsa-ca.pub"))).keyID)
        section.writeByte(0x23)
        section.writeString(ids.bytes)
        let bytes = krl(section: 1, section.bytes)
        XCTAssertTrue(try sshKeygenRevokes(bytes, "cert-by-rsa-ca.pub"), "ssh-keygen -Q: revoked")
        let list = try RevocationList.parse(path: "krl", bytes: bytes)
        XCTAssertNotNil(list.revocation(of: try HostKey(openSSHLine: try line("cert-by-rsa-ca.pub"))))
    }

    func testAKRLListingAKeyPaddedRevokesNothingAsSshDoes() throws {
        var section = SSHWireWriter()
        section.writeString(try blob("same-rsa-modulus-padded.pub"))
        let bytes = krl(section: 2, section.bytes)
        XCTAssertFalse(try sshKeygenRevokes(bytes, "rsa2048.pub"), "ssh compares a KRL's listed key as bytes")
        XCTAssertNil(try RevocationList.parse(path: "krl", bytes: bytes).revocation(of: try HostKey(openSSHLine: try line("rsa2048.pub"))))
        var plain = SSHWireWriter()
        plain.writeString(try blob("rsa2048.pub"))
        XCTAssertTrue(try sshKeygenRevokes(krl(section: 2, plain.bytes), "rsa2048.pub"), "control: listed as written, it is revoked")
        XCTAssertNotNil(try RevocationList.parse(path: "krl", bytes: krl(section: 2, plain.bytes))
            .revocation(of: try HostKey(openSSHLine: try line("rsa2048.pub"))))
    }

    func testSecurityKeyLinesAreComparedInTheirCanonicalEncoding() throws {
        var writer = SSHWireWriter()
        writer.writeString("sk-ssh-ed25519@openssh.com")
        writer.writeString([UInt8](repeating: 7, count: 32))
        writer.writeString("ssh:")
        var padded = SSHWireWriter()
        padded.writeString("sk-ssh-ed25519@openssh.com\u{0}")
        padded.writeString([UInt8](repeating: 7, count: 32))
        padded.writeString("ssh:\u{0}")
        XCTAssertEqual(SecurityKeyBlob.canonical(typeName: "sk-ssh-ed25519@openssh.com", blob: padded.bytes), writer.bytes)
        var embedded = SSHWireWriter()
        embedded.writeString("sk-ssh-ed25519@openssh.com")
        embedded.writeString([UInt8](repeating: 7, count: 32))
        embedded.writeString("ssh:\u{0}x")
        XCTAssertNil(SecurityKeyBlob.canonical(typeName: "sk-ssh-ed25519@openssh.com", blob: embedded.bytes))
    }
}
