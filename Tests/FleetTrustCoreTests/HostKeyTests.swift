import Foundation
import XCTest
import FleetTrustTestFleet
@testable import FleetTrustCore

final class HostKeyTests: XCTestCase {
    func testFingerprintAndRandomartMatchSshKeygen() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ft-hostkey-\(getpid())")
        try? FileManager.default.removeItem(at: dir)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        for (type, bits) in [("ed25519", "256"), ("ecdsa", "256"), ("ecdsa", "384"), ("ecdsa", "521"), ("rsa", "2048"), ("rsa", "3072")] {
            let path = dir.appendingPathComponent("\(type)-\(bits)").path
            _ = try runTool("/usr/bin/ssh-keygen", ["-q", "-t", type, "-b", bits, "-N", "", "-f", path])
            let key = try HostKey(openSSHLine: String(contentsOfFile: path + ".pub", encoding: .utf8))
            let oracle = try runTool("/usr/bin/ssh-keygen", ["-lv", "-f", path + ".pub"]).split(separator: "\n").map(String.init)
            let fields = oracle[0].split(separator: " ")
            XCTAssertEqual(String(fields[0]), String(key.bits), type)
            XCTAssertEqual(String(fields[1]), key.sha256Fingerprint, type)
            XCTAssertEqual(Array(oracle.dropFirst()), Randomart.draw(key), type)
            let md5 = try runTool("/usr/bin/ssh-keygen", ["-E", "md5", "-lf", path + ".pub"]).split(separator: " ")[1]
            XCTAssertEqual(String(md5), key.md5Fingerprint)
        }
    }

    func testCertificateFieldsAreParsed() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ft-cert-\(getpid())")
        try? FileManager.default.removeItem(at: dir)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let ca = dir.appendingPathComponent("ca").path, host = dir.appendingPathComponent("host").path
        _ = try runTool("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", ca])
        _ = try runTool("/usr/bin/ssh-keygen", ["-q", "-t", "ecdsa", "-N", "", "-f", host])
        _ = try runTool("/usr/bin/ssh-keygen", ["-q", "-s", ca, "-I", "web-id", "-h", "-n", "a.example,b", "-z", "42", "-V", "20200101:20400101", host + ".pub"])
        let cert = try HostKey(openSSHLine: String(contentsOfFile: host + "-cert.pub", encoding: .utf8))
        XCTAssertEqual(cert.type, "ecdsa-sha2-nistp256-cert-v01@openssh.com")
        let parsed = try HostCertificate(cert)
        let plain = try HostKey(openSSHLine: String(contentsOfFile: host + ".pub", encoding: .utf8))
        let caKey = try HostKey(openSSHLine: String(contentsOfFile: ca + ".pub", encoding: .utf8))
        XCTAssertEqual(parsed.key, plain)
        XCTAssertEqual(parsed.signatureKey, caKey)
        XCTAssertEqual(parsed.principals, ["a.example", "b"])
        XCTAssertEqual(parsed.serial, 42)
        XCTAssertEqual(parsed.keyID, "web-id")
        XCTAssertEqual(parsed.role, .host)
        XCTAssertTrue(parsed.isValid(at: 1_800_000_000))
        let oracle = try runTool("/usr/bin/ssh-keygen", ["-lv", "-f", host + "-cert.pub"]).split(separator: "\n").map(String.init)
        XCTAssertEqual(String(oracle[0].split(separator: " ")[1]), cert.sha256Fingerprint, "a certificate is fingerprinted by its key")
        XCTAssertEqual(cert.sha256Fingerprint, plain.sha256Fingerprint)
        XCTAssertEqual(Array(oracle.dropFirst()), Randomart.draw(cert))
        XCTAssertFalse(parsed.isValid(at: 1_500_000_000))
    }

    func testKeyLineWhoseBlobNamesAnotherTypeIsRejected() throws {
        let ed = "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
        XCTAssertNoThrow(try HostKey(openSSHLine: "ssh-ed25519 \(ed)"))
        XCTAssertThrowsError(try HostKey(openSSHLine: "ssh-rsa \(ed)"))
        XCTAssertThrowsError(try HostKey(openSSHLine: "ssh-ed25519 !!!!"))
        XCTAssertThrowsError(try HostKey(openSSHLine: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMq"))
    }
}

func runTool(_ path: String, _ arguments: [String]) throws -> String {
    try Tool.run(path, arguments).stdout
}
