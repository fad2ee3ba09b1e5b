import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet
@testable import FleetTrustSSH

/// Every key-exchange method our client speaks, each against a real `sshd` that allows only that
/// method: the key is proved by our client (the report names the method), and is the key
/// `ssh-keygen -lf` reads from the server's files.
final class KeyAgreementMethodTests: XCTestCase {
    private func assertProves(method: String, keyType: String = "ed25519", bits: String = "256",
                              algorithm: String = "ssh-ed25519", file: StaticString = #filePath, line: UInt = #line) throws {
        let sshd = try KeyExchangeTestSSHD(keys: [.init(type: keyType, bits: bits, certificateCA: nil)],
                                           extraConfig: ["KexAlgorithms \(method)"])
        defer { sshd.stop() }
        let report = KeyExchangeProbe.run(host: "127.0.0.1", port: sshd.port, hostKeyAlgorithms: [algorithm], timeout: 20)
        let found = try report.outcome.get()
        XCTAssertEqual(found.algorithms?.keyExchange, method, file: file, line: line)
        XCTAssertEqual(found.algorithms?.hostKey, algorithm, file: file, line: line)
        XCTAssertEqual(found.key, try sshd.publicKey(0), file: file, line: line)
        let oracle = try Tool.check("/usr/bin/ssh-keygen", ["-lf", sshd.keyPaths[0] + ".pub"]).split(separator: " ")
        XCTAssertEqual(found.key.sha256Fingerprint, String(oracle[1]), file: file, line: line)
    }

    func testECDHOverEachNISTCurveProvesTheKeyOfAnSshdAllowingOnlyThatCurve() throws {
        try assertProves(method: "ecdh-sha2-nistp256", keyType: "ecdsa", bits: "256", algorithm: "ecdsa-sha2-nistp256")
        try assertProves(method: "ecdh-sha2-nistp384")
        try assertProves(method: "ecdh-sha2-nistp521", keyType: "rsa", bits: "2048", algorithm: "rsa-sha2-512")
    }

    func testFixedDiffieHellmanGroupsProveTheKeyOfAnSshdAllowingOnlyThatGroup() throws {
        try assertProves(method: "diffie-hellman-group14-sha256")
        try assertProves(method: "diffie-hellman-group16-sha512", keyType: "ecdsa", bits: "384", algorithm: "ecdsa-sha2-nistp384")
        try assertProves(method: "diffie-hellman-group18-sha512")
    }

    func testGroupExchangeProvesTheKeyOfAnSshdAllowingOnlyGroupExchange() throws {
        try assertProves(method: "diffie-hellman-group-exchange-sha256", keyType: "rsa", bits: "2048", algorithm: "rsa-sha2-256")
    }

    func testCurve25519UnderBothNamesProvesTheKey() throws {
        try assertProves(method: "curve25519-sha256")
        try assertProves(method: "curve25519-sha256@libssh.org")
    }

    /// X25519 peers follow one another in one thread's peer key (its value replaced in place),
    /// with the thread's shared key pair (its derivation context kept from one exchange to the
    /// next): each secret is the one `openssl pkeyutl -derive` computes for that peer, and a
    /// low-order point between them is still refused.
    func testCurve25519SecretsMatchOpenSSLsForPeersInTurn() throws {
        let directory = NSTemporaryDirectory() + "ft-x25519-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ours = try Curve25519KeyAgreement()
        // SubjectPublicKeyInfo of an X25519 key (RFC 8410): a fixed prefix, then the 32 bytes.
        let spkiPrefix: [UInt8] = [0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x6e, 0x03, 0x21, 0x00]
        let ourPublic = directory + "/ours.der"
        FileManager.default.createFile(atPath: ourPublic, contents: Data(spkiPrefix + ours.publicKey))
        var secrets: [[UInt8]] = []
        for peer in 0..<3 {
            let key = directory + "/peer\(peer).pem", publicDER = key + ".pub.der", derived = key + ".secret"
            try Tool.check("/usr/bin/openssl", ["genpkey", "-algorithm", "X25519", "-out", key])
            try Tool.check("/usr/bin/openssl", ["pkey", "-in", key, "-pubout", "-outform", "DER", "-out", publicDER])
            try Tool.check("/usr/bin/openssl", ["pkeyutl", "-derive", "-inkey", key, "-peerkey", ourPublic,
                                                "-peerform", "DER", "-out", derived])
            let peerPublic = [UInt8](try Data(contentsOf: URL(fileURLWithPath: publicDER)).suffix(32))
            let expected = [UInt8](try Data(contentsOf: URL(fileURLWithPath: derived)))
            XCTAssertEqual(expected.count, 32)
            XCTAssertEqual(ours.sharedSecret(serverPublicKey: peerPublic), expected, "peer \(peer)")
            XCTAssertNil(ours.sharedSecret(serverPublicKey: [UInt8](repeating: 0, count: 32)),
                         "the all-zero point after peer \(peer)")
            secrets.append(expected)
        }
        XCTAssertEqual(Set(secrets).count, 3)
    }

    /// Every curve25519 exchange of a thread, and the hybrid's X25519 half, shares the thread's key
    /// pair for `EphemeralKeyLifetime.exchangesPerPair` exchanges, then gets a new one.
    func testEveryX25519ExchangeSharesItsThreadsKeyPairForABoundedNumberOfExchanges() throws {
        let negotiated = NegotiatedAlgorithms(hostKey: "ssh-ed25519", keyExchange: "curve25519-sha256",
                                              cipher: "chacha20-poly1305@openssh.com", mac: "<implicit>")
        let hybrid = NegotiatedAlgorithms(hostKey: "ssh-ed25519", keyExchange: "sntrup761x25519-sha512@openssh.com",
                                          cipher: "chacha20-poly1305@openssh.com", mac: "<implicit>")
        let uses = EphemeralKeyLifetime.exchangesPerPair
        var values: [[UInt8]] = []
        for index in 0..<(3 * uses + 1) {
            // Every tenth exchange is the hybrid's, whose last 32 bytes are its X25519 value.
            let message = index % 10 == 5
                ? try KeyExchangeMethod.sntrup761x25519.makeAgreement(hybrid).firstMessage
                : try KeyExchangeMethod.curve25519.makeAgreement(negotiated).firstMessage
            values.append(Array(message.suffix(32)))
        }
        assertKeyPairRuns(values, bound: uses)
    }

    func testGroupExchangeRequestsTheSizesSshRequests() {
        let chacha = NegotiatedAlgorithms(hostKey: "ssh-ed25519", keyExchange: "diffie-hellman-group-exchange-sha256",
                                          cipher: "chacha20-poly1305@openssh.com", mac: "<implicit>")
        XCTAssertEqual(GroupExchangeKeyAgreement(negotiated: chacha).firstMessage,
                       [34, 0, 0, 8, 0, 0, 0, 0x20, 0, 0, 0, 0x20, 0], "ssh -vvv: SSH2_MSG_KEX_DH_GEX_REQUEST(2048<8192<8192)")
        let aes128 = NegotiatedAlgorithms(hostKey: "ssh-ed25519", keyExchange: "diffie-hellman-group-exchange-sha256",
                                          cipher: "aes128-ctr", mac: "umac-64-etm@openssh.com")
        XCTAssertEqual(GroupExchangeKeyAgreement(negotiated: aes128).preferredBits, 3072)
    }
}
