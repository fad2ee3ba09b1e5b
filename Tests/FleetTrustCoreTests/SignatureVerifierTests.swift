import Foundation
import XCTest
@testable import FleetTrustCore

final class SignatureVerifierTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ft-sig-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Every CA key type and RSA signature algorithm ssh-keygen can sign a host certificate with.
    private let caCases: [(type: String, bits: String, signWith: String?, expected: String)] = [
        ("ed25519", "256", nil, "ssh-ed25519"),
        ("ecdsa", "256", nil, "ecdsa-sha2-nistp256"),
        ("ecdsa", "384", nil, "ecdsa-sha2-nistp384"),
        ("ecdsa", "521", nil, "ecdsa-sha2-nistp521"),
        ("rsa", "2048", "rsa-sha2-512", "rsa-sha2-512"),
        ("rsa", "3072", "rsa-sha2-256", "rsa-sha2-256"),
        ("rsa", "2048", "ssh-rsa", "ssh-rsa"),
    ]

    func testCertificatesSignedByEveryCAKeyTypeVerify() throws {
        for (index, ca) in caCases.enumerated() {
            let cert = try makeCertificate(caType: ca.type, caBits: ca.bits, signWith: ca.signWith, name: "c\(index)")
            XCTAssertTrue(cert.certificate.isSignatureValid, ca.expected)
            XCTAssertEqual(cert.certificate.signatureAlgorithm, ca.expected)
            XCTAssertEqual(cert.certificate.signatureKey, cert.caKey)
        }
    }

    func testTamperedPrincipalFailsVerification() throws {
        for (index, ca) in caCases.enumerated() {
            let made = try makeCertificate(caType: ca.type, caBits: ca.bits, signWith: ca.signWith, name: "t\(index)")
            var blob = made.key.blob
            let principal = Array("web.example".utf8)
            let at = try XCTUnwrap(firstIndex(of: principal, in: blob))
            blob[at] ^= 0x01
            let tampered = try HostCertificate(try HostKey(blob: blob))
            XCTAssertEqual(tampered.principals, ["veb.example", "db"])
            XCTAssertFalse(tampered.isSignatureValid, ca.expected)
        }
    }

    func testSignatureCheckedWithAnotherCAKeyFails() throws {
        let first = try makeCertificate(caType: "ed25519", caBits: "256", signWith: nil, name: "a")
        let second = try makeCertificate(caType: "ed25519", caBits: "256", signWith: nil, name: "b")
        let cert = first.certificate
        XCTAssertTrue(SignatureVerifier.verify(signatureBlob: cert.signature, data: cert.signedData, key: first.caKey))
        XCTAssertFalse(SignatureVerifier.verify(signatureBlob: cert.signature, data: cert.signedData, key: second.caKey))
    }

    func testSignatureAlgorithmMustFitTheKeyType() throws {
        let rsa = try makeCertificate(caType: "rsa", caBits: "2048", signWith: "rsa-sha2-512", name: "r").certificate
        let ecdsa = try makeCertificate(caType: "ecdsa", caBits: "256", signWith: nil, name: "e").certificate
        for (cert, wrongNames) in [(rsa, ["rsa-sha2-256", "ssh-rsa", "ssh-ed25519", "ecdsa-sha2-nistp256"]),
                                   (ecdsa, ["ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521", "rsa-sha2-512", "ssh-ed25519"])] {
            var reader = SSHWireReader(cert.signature)
            let name = try reader.readUTF8()
            let body = try reader.readString()
            XCTAssertTrue(SignatureVerifier.verify(signatureBlob: signatureBlob(name, body), data: cert.signedData, key: cert.signatureKey))
            for wrong in wrongNames {
                XCTAssertFalse(SignatureVerifier.verify(signatureBlob: signatureBlob(wrong, body), data: cert.signedData,
                                                        key: cert.signatureKey), "\(name) relabelled \(wrong)")
            }
        }
    }

    /// `ssh-keygen -Y sign` (PROTOCOL.sshsig) signs a wrapper around the message's hash with the plain key.
    func testSshsigSignaturesFromSshKeygenVerify() throws {
        let message = directory.appendingPathComponent("message")
        try Data("deploy 2026-11-22\n".utf8).write(to: message)
        for (type, bits) in [("ed25519", "256"), ("ecdsa", "256"), ("ecdsa", "384"), ("ecdsa", "521"), ("rsa", "3072")] {
            let keyPath = directory.appendingPathComponent("sign-\(type)-\(bits)").path
            _ = try runTool("/usr/bin/ssh-keygen", ["-q", "-t", type, "-b", bits, "-N", "", "-f", keyPath])
            try? FileManager.default.removeItem(atPath: message.path + ".sig")
            _ = try runTool("/usr/bin/ssh-keygen", ["-Y", "sign", "-f", keyPath, "-n", "file", message.path])
            let armored = try String(contentsOfFile: message.path + ".sig", encoding: .utf8)
            let sshsig = try XCTUnwrap(Base64.decode(armored.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()))
            var reader = SSHWireReader(sshsig)
            XCTAssertEqual(try reader.readBytes(6), Array("SSHSIG".utf8))
            XCTAssertEqual(try reader.readUInt32(), 1)
            let key = try HostKey(blob: try reader.readString())
            let namespace = try reader.readString(), reserved = try reader.readString()
            let hashName = try reader.readUTF8()
            let signature = try reader.readString()
            XCTAssertEqual(key, try HostKey(openSSHLine: String(contentsOfFile: keyPath + ".pub", encoding: .utf8)))
            func signedData(_ content: [UInt8]) -> [UInt8] {
                var writer = SSHWireWriter()
                writer.writeRaw(Array("SSHSIG".utf8))
                writer.writeString(namespace)
                writer.writeString(reserved)
                writer.writeString(hashName)
                writer.writeString(hashName == "sha512" ? Digest.sha512(content) : Digest.sha256(content))
                return writer.bytes
            }
            let content = [UInt8](try Data(contentsOf: message))
            XCTAssertTrue(SignatureVerifier.verify(signatureBlob: signature, data: signedData(content), key: key), type + bits)
            XCTAssertFalse(SignatureVerifier.verify(signatureBlob: signature, data: signedData(content + [0x0a]), key: key), type + bits)
        }
    }

    func testMalformedSignatureBlobsNeverVerify() throws {
        for (index, ca) in caCases.enumerated() {
            let cert = try makeCertificate(caType: ca.type, caBits: ca.bits, signWith: ca.signWith, name: "m\(index)").certificate
            let valid = cert.signature
            XCTAssertTrue(SignatureVerifier.verify(signatureBlob: valid, data: cert.signedData, key: cert.signatureKey))
            for length in 0..<valid.count {
                XCTAssertFalse(SignatureVerifier.verify(signatureBlob: Array(valid.prefix(length)), data: cert.signedData,
                                                        key: cert.signatureKey), "\(ca.expected) truncated to \(length)")
            }
            for position in stride(from: 0, to: valid.count, by: 3) {
                var flipped = valid
                flipped[position] ^= 0x80
                XCTAssertFalse(SignatureVerifier.verify(signatureBlob: flipped, data: cert.signedData, key: cert.signatureKey),
                               "\(ca.expected) flipped at \(position)")
            }
            XCTAssertFalse(SignatureVerifier.verify(signatureBlob: valid + [0], data: cert.signedData, key: cert.signatureKey))
        }
    }

    /// As `sshbuf_get_bignum2` reads them: negative refused, leading zeros skipped (any number),
    /// over OpenSSH's 2048-byte bignum limit refused.
    func testECDSAScalarsArePositiveMPIntsReadAsSshReadsThem() throws {
        var negative = SSHWireWriter()
        negative.writeString([0x80] + [UInt8](repeating: 1, count: 31))
        negative.writeString([0x01])
        XCTAssertNil(SignatureVerifier.ecdsaRaw(negative.bytes, scalarBytes: 32))
        var padded = SSHWireWriter()
        padded.writeString([0x00, 0x00, 0x01])
        padded.writeString([0x00, 0x01])
        XCTAssertEqual(SignatureVerifier.ecdsaRaw(padded.bytes, scalarBytes: 32),
                       [UInt8](repeating: 0, count: 31) + [0x01] + [UInt8](repeating: 0, count: 31) + [0x01], "needless zeros are skipped")
        var overLimit = SSHWireWriter()
        overLimit.writeString([UInt8](repeating: 0, count: 2049) + [0x01])
        overLimit.writeString([0x01])
        XCTAssertNil(SignatureVerifier.ecdsaRaw(overLimit.bytes, scalarBytes: 32), "over OpenSSH's bignum limit")
        var atLimit = SSHWireWriter()
        atLimit.writeString([UInt8](repeating: 0, count: 2048) + [0x01])
        atLimit.writeString([0x01])
        XCTAssertNotNil(SignatureVerifier.ecdsaRaw(atLimit.bytes, scalarBytes: 32), "a sign byte over 2048 bytes of zeros and one")
        var long = SSHWireWriter()
        long.writeString([0x01] + [UInt8](repeating: 0, count: 32))
        long.writeString([0x01])
        XCTAssertNil(SignatureVerifier.ecdsaRaw(long.bytes, scalarBytes: 32), "a scalar longer than the order")
        var fine = SSHWireWriter()
        fine.writeString([0x00, 0x80])
        fine.writeString([0x01])
        let zeros = [UInt8](repeating: 0, count: 31)
        XCTAssertEqual(SignatureVerifier.ecdsaRaw(fine.bytes, scalarBytes: 32), zeros + [0x80] + zeros + [0x01])
        XCTAssertNil(SignatureVerifier.ecdsaRaw(fine.bytes + [0], scalarBytes: 32), "a trailing byte")
    }

    /// Names are read as `sshbuf_get_cstring` reads them: one NUL at the very end ends the name.
    func testANameIsReadAsSshReadsACString() throws {
        func read(_ bytes: [UInt8]) -> String? {
            var writer = SSHWireWriter()
            writer.writeString(bytes)
            var reader = SSHWireReader(writer.bytes)
            return try? reader.readCString()
        }
        XCTAssertEqual(read(Array("ssh-ed25519".utf8)), "ssh-ed25519")
        XCTAssertEqual(read(Array("ssh-ed25519".utf8) + [0]), "ssh-ed25519")
        XCTAssertNil(read(Array("ssh-ed25519".utf8) + [0, 0]), "two NULs")
        XCTAssertNil(read(Array("ssh-".utf8) + [0] + Array("ed25519".utf8)), "a NUL inside")
        XCTAssertEqual(read([0]), "")
        XCTAssertEqual(read([]), "")
    }

    /// OpenSSH's ref10 refuses an S with any of its top three bits set and takes any other modulo L.
    func testAnEd25519SIsReadAsSshReadsIt() {
        let order: [UInt8] = [0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14]
            + [UInt8](repeating: 0, count: 15) + [0x10]
        let r = [UInt8](repeating: 7, count: 32)
        let small = [UInt8](repeating: 0, count: 31) + [0x01]
        XCTAssertEqual(SignatureVerifier.ed25519AsOpenSSHReadsIt(r + small), r + small, "below L: as it is")
        XCTAssertEqual(SignatureVerifier.ed25519AsOpenSSHReadsIt(r + order), r + [UInt8](repeating: 0, count: 32), "L is 0")
        var orderPlusFive = order
        orderPlusFive[0] &+= 5
        XCTAssertEqual(SignatureVerifier.ed25519AsOpenSSHReadsIt(r + orderPlusFive), r + [5] + [UInt8](repeating: 0, count: 31))
        var borrow = [UInt8](repeating: 0, count: 31) + [0x1f]
        borrow[0] = 0x00
        let reduced = SignatureVerifier.ed25519AsOpenSSHReadsIt(r + borrow)
        XCTAssertEqual(reduced?.prefix(32).map { $0 }, r)
        XCTAssertEqual(reduced?.suffix(32).first, 0x13, "0x1f00…00 - L: the borrow runs through the low bytes (0x100 - 0xed)")
        XCTAssertEqual(reduced?.suffix(32).last, 0x0e)
        XCTAssertNil(SignatureVerifier.ed25519AsOpenSSHReadsIt(r + [UInt8](repeating: 0, count: 31) + [0x20]), "a top bit set")
        XCTAssertNil(SignatureVerifier.ed25519AsOpenSSHReadsIt(r + small + [0]), "65 bytes")
        XCTAssertNil(SignatureVerifier.ed25519AsOpenSSHReadsIt(Array((r + small).dropLast())), "63 bytes")
    }

    private func makeCertificate(caType: String, caBits: String, signWith: String?, name: String) throws
        -> (key: HostKey, certificate: HostCertificate, caKey: HostKey) {
        let ca = directory.appendingPathComponent("ca-\(name)").path
        let host = directory.appendingPathComponent("host-\(name)").path
        _ = try runTool("/usr/bin/ssh-keygen", ["-q", "-t", caType, "-b", caBits, "-N", "", "-f", ca])
        _ = try runTool("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", host])
        var arguments = ["-q", "-s", ca, "-I", "id-\(name)", "-h", "-n", "web.example,db", "-z", "7"]
        if let signWith { arguments += ["-t", signWith] }
        _ = try runTool("/usr/bin/ssh-keygen", arguments + [host + ".pub"])
        let key = try HostKey(openSSHLine: String(contentsOfFile: host + "-cert.pub", encoding: .utf8))
        let caKey = try HostKey(openSSHLine: String(contentsOfFile: ca + ".pub", encoding: .utf8))
        return (key, try HostCertificate(key), caKey)
    }

    private func signatureBlob(_ algorithm: String, _ body: [UInt8]) -> [UInt8] {
        var writer = SSHWireWriter()
        writer.writeString(algorithm)
        writer.writeString(body)
        return writer.bytes
    }

    private func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        return (0...(haystack.count - needle.count)).first { Array(haystack[$0..<$0 + needle.count]) == needle }
    }
}
