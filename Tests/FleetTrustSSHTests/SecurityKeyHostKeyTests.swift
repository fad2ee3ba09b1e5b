import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet
@testable import FleetTrustSSH

/// Security-key host keys (`sk-ssh-ed25519@openssh.com`, `sk-ecdsa-sha2-nistp256@openssh.com`) and
/// their certificates, served by the fake key server signing as a token signs (no user presence):
/// our client proves them, fingerprints them as `ssh-keygen -l` does, reads them back from a
/// known_hosts line, and the real `ssh` meeting the same server accepts, revokes or calls them
/// changed exactly as the recorded lines say.
final class SecurityKeyHostKeyTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ft-sk-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
    }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// ssh's finding against `port` with `knownHosts` lines, offering only `algorithm`.
    private func ssh(port: Int, algorithm: String, knownHosts lines: [String]) throws -> SSHOracle.Handshake {
        try (lines.joined(separator: "\n") + "\n").write(toFile: path("known_hosts"), atomically: true, encoding: .utf8)
        try "Host sk\n  HostName 127.0.0.1\n  Port \(port)\n  UserKnownHostsFile \(path("known_hosts"))\n  GlobalKnownHostsFile /dev/null\n"
            .write(toFile: path("ssh_config"), atomically: true, encoding: .utf8)
        return try SSHOracle.handshake(host: "sk", config: path("ssh_config"), extraOptions: ["HostKeyAlgorithms=\(algorithm)"])
    }

    func testSecurityKeyHostKeysAreProvedFingerprintedAndJudgedAsSshJudgesThem() throws {
        for (type, algorithm) in [("ed25519", "sk-ssh-ed25519@openssh.com"), ("ecdsa", "sk-ecdsa-sha2-nistp256@openssh.com")] {
            try KeyFiles.generate(type: type, bits: type == "ecdsa" ? 256 : nil, path: path(type))
            let skFile = try KeyFiles.securityKey(privateKeyPath: path(type), output: path("\(type)-sk.pub"))
            let recorded = try HostKey(openSSHLine: try String(contentsOfFile: skFile, encoding: .utf8))
            XCTAssertEqual(recorded.type, algorithm)
            let server = try FakeKeyServer(keys: [FakeHostKey(privateKeyPath: path(type), presentedBlob: recorded.blob, algorithms: [algorithm])])
            defer { server.stop() }

            let found = try KeyExchangeProbe.run(host: "127.0.0.1", port: server.port, hostKeyAlgorithms: [algorithm], timeout: 10).outcome.get()
            XCTAssertEqual(found.key, recorded, algorithm)
            XCTAssertEqual(found.algorithms?.hostKey, algorithm)
            let keygen = try Tool.check("/usr/bin/ssh-keygen", ["-lf", skFile]).split(separator: " ")
            XCTAssertEqual(found.key.sha256Fingerprint, String(keygen[1]), algorithm)
            XCTAssertEqual("(\(found.key.kind.label))", keygen.last.map { String($0).trimmingCharacters(in: .newlines) })
            XCTAssertEqual(try HostKey(openSSHLine: found.key.openSSHLine), recorded, "a known_hosts line written reads back")

            let name = "[127.0.0.1]:\(server.port)"
            XCTAssertEqual(try ssh(port: server.port, algorithm: algorithm, knownHosts: ["\(name) \(recorded.openSSHLine)"]).finding,
                           .accepted, algorithm)
            try KeyFiles.generate(type: "ed25519", path: path("other-\(type)"))
            let other = try KeyFiles.line(publicKeyFile: path("other-\(type).pub"))
            XCTAssertEqual(try ssh(port: server.port, algorithm: algorithm, knownHosts: ["\(name) \(other)"]).finding, .changed, algorithm)
            XCTAssertEqual(try ssh(port: server.port, algorithm: algorithm,
                                   knownHosts: ["@revoked * \(recorded.openSSHLine)", "\(name) \(recorded.openSSHLine)"]).finding,
                           .revoked, algorithm)
        }
    }

    func testSecurityKeyHostCertificatesAreProvedAndTrustedThroughTheirAuthority() throws {
        try KeyFiles.generate(type: "ed25519", path: path("ca"))
        for (type, algorithm) in [("ed25519", "sk-ssh-ed25519-cert-v01@openssh.com"), ("ecdsa", "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com")] {
            try KeyFiles.generate(type: type, bits: type == "ecdsa" ? 256 : nil, path: path(type))
            let skFile = try KeyFiles.securityKey(privateKeyPath: path(type), output: path("\(type)-sk-source.pub"))
            let certificateFile = try KeyFiles.certify(publicKeyPath: skFile, caPath: path("ca"), identity: "sk-host",
                                                       principals: ["127.0.0.1"], output: path("\(type)-sk-cert.pub"))
            let server = try FakeKeyServer(keys: [FakeHostKey(privateKeyPath: path(type),
                                                              presentedBlob: try KeyFiles.blob(publicKeyFile: certificateFile),
                                                              algorithms: [algorithm])])
            defer { server.stop() }

            let found = try KeyExchangeProbe.run(host: "127.0.0.1", port: server.port, hostKeyAlgorithms: [algorithm], timeout: 10).outcome.get()
            XCTAssertEqual(found.key.type, algorithm)
            let certificate = try HostCertificate(found.key)
            XCTAssertEqual(certificate.key, try HostKey(openSSHLine: try String(contentsOfFile: skFile, encoding: .utf8)))
            XCTAssertTrue(certificate.isSignatureValid)
            XCTAssertEqual(certificate.principals, ["127.0.0.1"])

            let authority = "@cert-authority * \(try KeyFiles.line(publicKeyFile: path("ca.pub")))"
            XCTAssertEqual(try ssh(port: server.port, algorithm: algorithm, knownHosts: [authority]).finding, .acceptedByCA, algorithm)
            XCTAssertEqual(try ssh(port: server.port, algorithm: algorithm,
                                   knownHosts: [authority, "@revoked * \(try KeyFiles.line(publicKeyFile: path("ca.pub")))"]).finding,
                           .revoked, algorithm)
        }
    }

    /// The signature covers the application, the flags and the counter: changing any of them, or
    /// the data, fails it.
    func testASecurityKeySignatureCoversItsApplicationFlagsAndCounter() throws {
        let made = try Tool.check("/usr/bin/python3", ["-c", """
            import base64, hashlib, struct
            from cryptography.hazmat.primitives.asymmetric import ed25519
            from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
            s = lambda b: struct.pack(">I", len(b)) + b
            k = ed25519.Ed25519PrivateKey.generate()
            pk = k.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
            tail = bytes([1]) + struct.pack(">I", 42)
            signed = hashlib.sha256(b"ssh:").digest() + tail + hashlib.sha256(b"exchange hash").digest()
            print(base64.b64encode(s(b"sk-ssh-ed25519@openssh.com") + s(pk) + s(b"ssh:")).decode())
            print(base64.b64encode(s(b"sk-ssh-ed25519@openssh.com") + s(k.sign(signed)) + tail).decode())
            """]).split(separator: "\n")
        let key = try HostKey(openSSHLine: "sk-ssh-ed25519@openssh.com \(made[0])")
        let signature = try XCTUnwrap(Base64.decode(made[1]))
        let data = Array("exchange hash".utf8)
        XCTAssertTrue(SignatureVerifier.verify(signatureBlob: signature, data: data, key: key))
        XCTAssertFalse(SignatureVerifier.verify(signatureBlob: signature, data: data + [0], key: key))
        var flags = signature
        flags[flags.count - 5] ^= 4
        XCTAssertFalse(SignatureVerifier.verify(signatureBlob: flags, data: data, key: key))
        var counter = signature
        counter[counter.count - 1] ^= 1
        XCTAssertFalse(SignatureVerifier.verify(signatureBlob: counter, data: data, key: key))
        var blob = key.blob
        blob[blob.count - 1] = UInt8(ascii: ";")
        XCTAssertFalse(SignatureVerifier.verify(signatureBlob: signature, data: data, key: try HostKey(blob: blob)))
        XCTAssertFalse(SignatureVerifier.verify(signatureBlob: signature + [0], data: data, key: key), "trailing bytes")
    }
}
