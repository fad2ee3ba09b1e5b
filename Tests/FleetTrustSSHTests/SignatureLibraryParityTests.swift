import COpenSSL
import Foundation
import XCTest
@testable import FleetTrustCore

/// The scan checks Ed25519 and ECDSA signatures with swift-crypto where it used OpenSSL 3: the same
/// answer, on real signatures (`ssh-keygen -Y sign`) and on every malformed form OpenSSL refuses
/// (Ed25519's s at or above L, a small-order or non-canonical key; ECDSA's r or s zero, at or
/// above the order, negative, padded, too long; wrong lengths, trailing bytes, flipped bits), so
/// acceptance is never wider than it was, nor narrower; but for the two forms `ssh` reads more
/// widely than OpenSSL (an Ed25519 S + L, an mpint with a needless leading zero), where the
/// scan gives `ssh`'s answer.
final class SignatureLibraryParityTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ft-sigparity-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    func testRealAndMalformedSignaturesGetOpenSSLsAnswer() throws {
        var kinds: Set<String> = []
        for signed in try SignedCorpus.make(in: directory) where !signed.key.isCertificate && signed.key.kind != .rsa {
            var blob = SSHWireReader(signed.signature)
            let algorithm = try blob.readUTF8(), inner = try blob.readString()
            let variants = signed.key.kind == .ed25519 ? edwardsVariants(inner) : try ecdsaVariants(inner, kind: signed.key.kind)
            var acceptedByBoth = 0
            for (label, signature) in variants {
                for data in [signed.data, signed.data + [0]] {
                    let ours = SignatureVerifier.verify(signatureBlob: wrap(algorithm, signature), data: data, key: signed.key)
                    let openSSL = OpenSSLSignatureReference.accepts(signature: signature, data: data, key: signed.key)
                    // Beyond OpenSSL, as ssh reads them: S + L (top bits clear) and a needless zero
                    // before r (KeyEncodingOracleTests checks both against the real ssh).
                    let sshReading = data == signed.data && (label == "r with a needless zero" || label == "s + L" && signature[63] & 0xe0 == 0)
                    XCTAssertEqual(ours, openSSL || sshReading, "\(signed.name): \(label)\(data == signed.data ? "" : ", other data")")
                    if ours && openSSL { acceptedByBoth += 1 }
                }
            }
            XCTAssertTrue(SignatureVerifier.verify(signatureBlob: signed.signature, data: signed.data, key: signed.key), signed.name)
            XCTAssertFalse(SignatureVerifier.verify(signatureBlob: signed.signature + [0], data: signed.data, key: signed.key),
                           "\(signed.name): a byte after the signature")
            // Ed25519: the valid signature; ECDSA: it and its twin (r, n - s), which both libraries accept.
            XCTAssertEqual(acceptedByBoth, signed.key.kind == .ed25519 ? 1 : 2, signed.name)
            kinds.insert(algorithm)
        }
        XCTAssertEqual(kinds, ["ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521"])
    }

    /// Keys no ssh-keygen makes: the identity (small order), canonically and as y = p + 1, with the
    /// signature (R = identity, s = 0) that a check without OpenSSL's rules would accept for any message.
    func testSmallOrderAndNonCanonicalEd25519KeysGetOpenSSLsAnswer() throws {
        let identity: [UInt8] = [1] + [UInt8](repeating: 0, count: 31)
        let nonCanonicalIdentity: [UInt8] = [0xee] + [UInt8](repeating: 0xff, count: 30) + [0x7f]
        let data = Array("any message".utf8)
        for point in [identity, nonCanonicalIdentity] {
            var blob = SSHWireWriter()
            blob.writeString("ssh-ed25519")
            blob.writeString(point)
            let key = try HostKey(blob: blob.bytes)
            for r in [identity, nonCanonicalIdentity] {
                let signature = r + [UInt8](repeating: 0, count: 32)
                XCTAssertEqual(SignatureVerifier.verify(signatureBlob: wrap("ssh-ed25519", signature), data: data, key: key),
                               OpenSSLSignatureReference.accepts(signature: signature, data: data, key: key),
                               "key \(point.first!), R \(r.first!)")
            }
        }
    }

    private func wrap(_ algorithm: String, _ signature: [UInt8]) -> [UInt8] {
        var blob = SSHWireWriter()
        blob.writeString(algorithm)
        blob.writeString(signature)
        return blob.bytes
    }

    /// L, the order of Ed25519's base point, little-endian (RFC 8032 §5.1).
    private let ed25519Order: [UInt8] = [0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14]
        + [UInt8](repeating: 0, count: 15) + [0x10]

    private func edwardsVariants(_ valid: [UInt8]) -> [(String, [UInt8])] {
        let r = Array(valid.prefix(32)), s = Array(valid.suffix(32))
        var sPlusL = [UInt8](repeating: 0, count: 32), carry = 0
        for index in 0..<32 {
            let sum = Int(s[index]) + Int(ed25519Order[index]) + carry
            sPlusL[index] = UInt8(sum & 0xff)
            carry = sum >> 8
        }
        var highBits = s
        highBits[31] |= 0xe0
        var all: [(String, [UInt8])] = [("valid", valid), ("s + L", r + sPlusL), ("s = L", r + ed25519Order),
                                        ("s with its top bits set", r + highBits), ("63 bytes", Array(valid.prefix(63))),
                                        ("65 bytes", valid + [0]), ("empty", [])]
        for position in [0, 17, 31, 32, 45, 63] {
            var flipped = valid
            flipped[position] ^= 0x01
            all.append(("bit flipped at \(position)", flipped))
        }
        return all
    }

    private func ecdsaVariants(_ valid: [UInt8], kind: KeyType) throws -> [(String, [UInt8])] {
        var reader = SSHWireReader(valid)
        let r = try reader.readString(), s = try reader.readString()
        let curve = kind == .ecdsaP256 ? NID_X9_62_prime256v1 : kind == .ecdsaP384 ? NID_secp384r1 : NID_secp521r1
        let group = try XCTUnwrap(EC_GROUP_new_by_curve_name(curve))
        defer { EC_GROUP_free(group) }
        let order = try XCTUnwrap(EC_GROUP_get0_order(group))
        let n = mpint(order)
        func pair(_ r: [UInt8], _ s: [UInt8]) -> [UInt8] {
            var writer = SSHWireWriter()
            writer.writeString(r)
            writer.writeString(s)
            return writer.bytes
        }
        let negativeR = r.first == 0 ? Array(r.dropFirst()) : [0xff] + r
        var all: [(String, [UInt8])] = [
            ("valid", valid), ("its twin (r, n - s)", pair(r, arithmetic(n, s, BN_sub))),
            ("r = 0", pair([], s)), ("s = 0", pair(r, [])), ("r = 0 as a byte", pair([0], s)),
            ("r = n", pair(n, s)), ("s = n", pair(r, n)), ("r + n", pair(arithmetic(r, n, BN_add), s)),
            ("s + n", pair(r, arithmetic(s, n, BN_add))), ("r = s = 1", pair([1], [1])),
            ("r without its sign byte", pair(negativeR, s)), ("r with a needless zero", pair([0] + r, s)),
            ("r longer than the order", pair([1] + [UInt8](repeating: 0, count: n.count), s)),
            ("r and s swapped", pair(s, r)), ("a trailing byte", valid + [0]), ("one byte short", Array(valid.dropLast())),
            ("s alone", pair(s, [])), ("empty", []),
        ]
        for position in [4, r.count + 3, valid.count - 1] {
            var flipped = valid
            flipped[position] ^= 0x01
            all.append(("bit flipped at \(position)", flipped))
        }
        return all
    }

    /// `op(a, b)` on mpints' magnitudes, as a minimal positive mpint.
    private func arithmetic(_ a: [UInt8], _ b: [UInt8],
                            _ op: (OpaquePointer?, OpaquePointer?, OpaquePointer?) -> Int32) -> [UInt8] {
        let x = a.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
        let y = b.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
        let result = BN_new()
        defer { BN_free(x); BN_free(y); BN_free(result) }
        XCTAssertEqual(op(result, x, y), 1)
        return mpint(result)
    }

    /// A non-negative number as SSH's minimal mpint magnitude (a zero byte before a set high bit).
    private func mpint(_ number: OpaquePointer?) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Int((BN_num_bits(number) + 7) / 8))
        _ = BN_bn2bin(number, &bytes)
        return (bytes.first ?? 0) & 0x80 != 0 ? [0] + bytes : bytes
    }
}
