import Foundation
import Synchronization
import FleetTrustTestFleet
import XCTest
@testable import FleetTrustCore

/// The kept verification keys (by blob) and the per-thread OpenSSL key building behind
/// `SignatureVerifier`: a kept or rebuilt key verifies only what its own private key signed.
final class VerificationKeyCacheTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ft-vkc-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    private let types = [("ed25519", "256"), ("ecdsa", "256"), ("ecdsa", "384"), ("ecdsa", "521"), ("rsa", "2048")]

    /// Two keys of each type sign the same message: each signature verifies with its own key,
    /// the first time (built) and again (kept), and never with the other key of the same type,
    /// whose OpenSSL key was made from the same per-thread template.
    func testKeptKeyNeverVerifiesASignatureByAnotherKeyOfTheSameType() throws {
        for (type, bits) in types {
            let first = try signed(type: type, bits: bits, name: "a")
            let second = try signed(type: type, bits: bits, name: "b")
            XCTAssertNotEqual(first.key, second.key)
            for round in 0..<2 {
                XCTAssertTrue(SignatureVerifier.verify(signatureBlob: first.signature, data: first.data, key: first.key), "\(type)\(bits) \(round)")
                XCTAssertTrue(SignatureVerifier.verify(signatureBlob: second.signature, data: second.data, key: second.key), "\(type)\(bits) \(round)")
                XCTAssertFalse(SignatureVerifier.verify(signatureBlob: first.signature, data: first.data, key: second.key), "\(type)\(bits) \(round)")
                XCTAssertFalse(SignatureVerifier.verify(signatureBlob: second.signature, data: second.data, key: first.key), "\(type)\(bits) \(round)")
                XCTAssertFalse(SignatureVerifier.verify(signatureBlob: first.signature, data: first.data + [0], key: first.key), "\(type)\(bits) \(round)")
            }
        }
    }

    /// Keys made on other threads (each with its own OpenSSL contexts) and kept keys shared
    /// between threads give every thread the same answers.
    func testVerifiersOnManyThreadsGiveTheSameAnswers() throws {
        let corpus = try types.map { try signed(type: $0.0, bits: $0.1, name: "t") }
        let wrong = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            var mistakes = 0
            for _ in 0..<5 {
                for (index, item) in corpus.enumerated() {
                    let other = corpus[(index + 1) % corpus.count]
                    if !SignatureVerifier.verify(signatureBlob: item.signature, data: item.data, key: item.key) { mistakes += 1 }
                    if SignatureVerifier.verify(signatureBlob: other.signature, data: other.data, key: item.key) { mistakes += 1 }
                }
            }
            wrong.withLock { $0 += mistakes }
        }
        XCTAssertEqual(wrong.withLock { $0 }, 0)
    }

    func testCacheKeepsNoMoreThanItsCapacity() throws {
        let cache = VerificationKeyCache(capacity: 4)
        var generator = SeededGenerator(seed: 0xCAC4E)
        let keys = try (0..<10).map { _ in
            var writer = SSHWireWriter()
            writer.writeString("ssh-ed25519")
            writer.writeString((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
            return try HostKey(blob: writer.bytes)
        }
        for key in keys { XCTAssertNotNil(cache.key(for: key)) }
        XCTAssertEqual(cache.count, 4)
        let last = try XCTUnwrap(cache.key(for: keys[9]))
        XCTAssertTrue(last === cache.key(for: keys[9]), "a kept key is handed out again")
        XCTAssertEqual(cache.count, 4)
    }

    /// A certificate with many principals is larger than what is kept: it still verifies (with
    /// the key it certifies), built afresh each time.
    func testLargeCertificateVerifiesWithoutBeingKept() throws {
        let made = try signed(type: "ed25519", bits: "256", name: "o")
        let ca = directory.appendingPathComponent("ca").path
        _ = try runTool("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", ca])
        let host = directory.appendingPathComponent("o-ed25519-256").path
        let principals = (0..<250).map { "host-\($0).principals.example" }.joined(separator: ",")
        _ = try runTool("/usr/bin/ssh-keygen", ["-q", "-s", ca, "-I", "big", "-h", "-n", principals, host + ".pub"])
        let certificate = try HostKey(openSSHLine: String(contentsOfFile: host + "-cert.pub", encoding: .utf8))
        XCTAssertGreaterThan(certificate.blob.count, VerificationKeyCache.largestBlob)
        let cache = VerificationKeyCache(capacity: 4)
        XCTAssertNotNil(cache.key(for: certificate))
        XCTAssertEqual(cache.count, 0)
        XCTAssertTrue(SignatureVerifier.verify(signatureBlob: made.signature, data: made.data, key: certificate))
        XCTAssertFalse(SignatureVerifier.verify(signatureBlob: made.signature, data: made.data + [0], key: certificate))
    }

    /// A key, a signature over `data` made by `ssh-keygen -Y sign` (PROTOCOL.sshsig), and `data`.
    private func signed(type: String, bits: String, name: String) throws -> (key: HostKey, signature: [UInt8], data: [UInt8]) {
        let keyPath = directory.appendingPathComponent("\(name)-\(type)-\(bits)").path
        let message = directory.appendingPathComponent("message-\(name)-\(type)-\(bits)")
        try Data("exchange hash of \(name)\n".utf8).write(to: message)
        _ = try runTool("/usr/bin/ssh-keygen", ["-q", "-t", type, "-b", bits, "-N", "", "-f", keyPath])
        _ = try runTool("/usr/bin/ssh-keygen", ["-Y", "sign", "-f", keyPath, "-n", "file", message.path])
        let armored = try String(contentsOfFile: message.path + ".sig", encoding: .utf8)
        let file = try SSHSignatureFile(armored: armored, message: [UInt8](try Data(contentsOf: message)))
        return (file.key, file.signature, file.signedData)
    }
}
