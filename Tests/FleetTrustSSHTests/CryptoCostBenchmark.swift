import COpenSSL
import Foundation
import XCTest
@testable import FleetTrustCore
import FleetTrustTestFleet
@testable import FleetTrustSSH

/// Per-operation CPU of a handshake's cryptography through our types, next to a floor (everything
/// prepared once, only the arithmetic per call): OpenSSL's own for signatures, which shows what
/// swift-crypto's Ed25519 and ECDSA checks save; X25519 by the same library as ours. Not part of `make test`: run with
/// `FLEETTRUST_CRYPTO_BENCH=1 swift test --skip-build --filter CryptoCostBenchmark` (best in a
/// release build). Thread CPU time, best of three rounds, so a busy machine blurs it less.
final class CryptoCostBenchmark: XCTestCase {
    func testCostPerOperationAgainstTheOpenSSLFloor() throws {
        try XCTSkipUnless(ProcessInfo.processInfo.environment["FLEETTRUST_CRYPTO_BENCH"] != nil, "set FLEETTRUST_CRYPTO_BENCH=1")
        let rounds = Int(ProcessInfo.processInfo.environment["FLEETTRUST_CRYPTO_BENCH_SCALE"] ?? "1") ?? 1
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ft-cryptobench-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let server = X25519KeyPair()
        let serverPublicKey = server.publicKey
        let clientInit = [UInt8](repeating: 7, count: 300), serverInit = [UInt8](repeating: 9, count: 1100)
        let x25519 = measure(2000 * rounds) {
            let pair = X25519KeyPair()
            guard let secret = pair.sharedSecret(with: serverPublicKey) else { return false }
            let values = KeyAgreementWire.pointsAndSecret(client: pair.publicKey, server: serverPublicKey, secret: secret)
            return ExchangeHash.sha256.exchangeHash(
                clientVersion: Array("SSH-2.0-fleettrust".utf8), serverVersion: Array("SSH-2.0-OpenSSH_9.2p1".utf8),
                clientKexInit: clientInit, serverKexInit: serverInit, hostKeyBlob: serverPublicKey,
                methodValues: values).count == 32
        }
        let floor = try x25519Floor(rounds)
        report("x25519 keygen + derive + exchange hash", x25519, floor)
        let shared = measure(2000 * rounds) {
            guard let agreement = try? Curve25519KeyAgreement(),
                  let values = try? agreement.hashedValues(serverValue: serverPublicKey) else { return false }
            return ExchangeHash.sha256.exchangeHash(
                clientVersion: Array("SSH-2.0-fleettrust".utf8), serverVersion: Array("SSH-2.0-OpenSSH_9.2p1".utf8),
                clientKexInit: clientInit, serverKexInit: serverInit, hostKeyBlob: serverPublicKey,
                methodValues: values).count == 32
        }
        report("  the same with the thread's shared pair", shared, nil)

        for signed in try SignedCorpus.make(in: directory) {
            let ours = measure((signed.name.contains("rsa") ? 4000 : 1000) * rounds) {
                SignatureVerifier.verify(signatureBlob: signed.signature, data: signed.data, key: signed.key)
            }
            XCTAssertFalse(SignatureVerifier.verify(signatureBlob: signed.signature, data: signed.data + [0], key: signed.key))
            report("verify \(signed.name)", ours, try verifyFloor(signed, rounds))
            report("  + building its key (not kept yet)", measure(1000 * rounds) { VerificationKey(signed.key) != nil }, nil)
        }

        report("sntrup761 key pair", measure(20 * rounds) { Sntrup761.generateKeyPair().publicKey.count == 1158 }, nil)
        // The figures `testfleet crypto-cost` prints, from the same measurement.
        let sntrup = Sntrup761ClientCost.measure(operations: 100 * rounds)
        report("sntrup761 key pair in a batch (per key)", sntrup.keyPairNanoseconds, nil)
        report("sntrup761 decapsulation", sntrup.decapsulationNanoseconds, nil)
    }

    /// The signature check alone: key, context and signature prepared once; the digest per call.
    private func verifyFloor(_ signed: SignedCorpus.Signed, _ rounds: Int) throws -> UInt64 {
        let plain = signed.key.isCertificate ? try HostCertificate(signed.key).key : signed.key
        var fields = SSHWireReader(plain.blob)
        _ = try fields.readString()
        var signature = SSHWireReader(signed.signature)
        let algorithm = try signature.readUTF8()
        let raw = try signature.readString()
        let count = (signed.name.contains("rsa") ? 4000 : 1000) * rounds
        if plain.kind == .ed25519 {
            let point = try fields.readString()
            let pkey = try XCTUnwrap(point.withUnsafeBufferPointer { EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, $0.baseAddress, 32) })
            let context = EVP_MD_CTX_new()
            defer { EVP_MD_CTX_free(context); EVP_PKEY_free(pkey) }
            XCTAssertEqual(EVP_DigestVerifyInit(context, nil, nil, nil, pkey), 1)
            return measure(count) { EVP_DigestVerify(context, raw, raw.count, signed.data, signed.data.count) == 1 }
        }
        let pkey: OpaquePointer, prepared: [UInt8]
        if plain.kind == .rsa {
            let e = try fields.readString(), n = try fields.readString()
            pkey = try XCTUnwrap(n.withUnsafeBytes { modulus in e.withUnsafeBytes { OpenSSLKeys.rsaPublicKey(modulus: modulus, exponent: $0) } })
            prepared = raw
        } else {
            _ = try fields.readString()
            let point = try fields.readString()
            let curve: OpenSSLKeys.ECCurveName = plain.kind == .ecdsaP256 ? .p256 : plain.kind == .ecdsaP384 ? .p384 : .p521
            pkey = try XCTUnwrap(point.withUnsafeBytes { OpenSSLKeys.ecPublicKey(curve, point: $0) })
            prepared = try XCTUnwrap(OpenSSLSignatureReference.der(raw))
        }
        let digest: ([UInt8]) -> [UInt8], md: OpaquePointer?
        switch algorithm {
        case "rsa-sha2-256", "ecdsa-sha2-nistp256": (digest, md) = (Digest.sha256, Digest.fetchedSHA256)
        case "ecdsa-sha2-nistp384": (digest, md) = (Digest.sha384, Digest.fetchedSHA384)
        default: (digest, md) = (Digest.sha512, Digest.fetchedSHA512)
        }
        let context = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil)
        defer { EVP_PKEY_CTX_free(context); EVP_PKEY_free(pkey) }
        XCTAssertEqual(EVP_PKEY_verify_init(context), 1)
        XCTAssertEqual(EVP_PKEY_CTX_set_signature_md(context, md), 1)
        return measure(count) {
            let hash = digest(signed.data)
            return EVP_PKEY_verify(context, prepared, prepared.count, hash, hash.count) == 1
        }
    }

    /// Two scalar multiplications (key generation costs one) and SHA-256 over 1.6 KB.
    private func x25519Floor(_ rounds: Int) throws -> UInt64 {
        let ours = X25519KeyPair(), peer = X25519KeyPair().publicKey
        let derive = measure(2000 * rounds) { ours.sharedSecret(with: peer) != nil }
        let input = [UInt8](repeating: 1, count: 1600)
        return 2 * derive + measure(20000 * rounds) { Digest.sha256(input).count == 32 }
    }

    /// Best thread-CPU nanoseconds per call of three rounds of `count` calls; every call must succeed.
    private func measure(_ count: Int, _ body: () -> Bool) -> UInt64 {
        var best = UInt64.max
        for _ in 0..<3 {
            let start = threadNanoseconds()
            var failures = 0
            for _ in 0..<count where !body() { failures += 1 }
            XCTAssertEqual(failures, 0)
            best = min(best, (threadNanoseconds() - start) / UInt64(count))
        }
        return best
    }

    private func threadNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    private func report(_ name: String, _ ours: UInt64, _ floor: UInt64?) {
        let reference = floor.map { String(format: "   floor %7llu ns   %.2fx", $0, Double(ours) / Double($0)) } ?? ""
        print(String(format: "crypto-bench  %-44@ %8llu ns/op", name as NSString, ours) + reference)
    }
}
