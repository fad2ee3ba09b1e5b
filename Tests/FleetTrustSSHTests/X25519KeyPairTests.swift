import XCTest
@testable import FleetTrustSSH

/// Our X25519 key pairs (swift-crypto's) held to RFC 7748's own vectors, to fresh pairs agreeing
/// with each other, and to a low-order server value showing as the all-zero result that the
/// exchange refuses.
final class X25519KeyPairTests: XCTestCase {
    private func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            out.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return out
    }

    func testRFC7748VectorsGiveThePublicValuesAndTheSharedSecret() throws {
        // RFC 7748 §6.1.
        let alice = try XCTUnwrap(X25519KeyPair(secret: bytes("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")))
        let bob = try XCTUnwrap(X25519KeyPair(secret: bytes("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb")))
        XCTAssertEqual(alice.publicKey, bytes("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"))
        XCTAssertEqual(bob.publicKey, bytes("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"))
        let shared = bytes("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")
        XCTAssertEqual(alice.sharedSecret(with: bob.publicKey), shared)
        XCTAssertEqual(bob.sharedSecret(with: alice.publicKey), shared)
        XCTAssertNil(X25519KeyPair(secret: Array(repeating: 1, count: 31)), "a scalar of the wrong length")
        XCTAssertNil(alice.sharedSecret(with: Array(repeating: 1, count: 31)), "a peer value of the wrong length")
    }

    func testFreshPairsAreDistinctAndAgree() throws {
        let one = X25519KeyPair(), other = X25519KeyPair()
        XCTAssertNotEqual(one.publicKey, other.publicKey)
        XCTAssertEqual(one.publicKey.count, 32)
        let secret = try XCTUnwrap(one.sharedSecret(with: other.publicKey))
        XCTAssertEqual(secret, other.sharedSecret(with: one.publicKey))
        XCTAssertTrue(secret.contains { $0 != 0 })
    }

    func testALowOrderServerValueGivesTheZeroSecretWhichTheExchangeRefuses() throws {
        // RFC 7748 §6.1's Alice against the points of order 1 and 2 (u = 0, u = 1): the result is 0.
        let alice = try XCTUnwrap(X25519KeyPair(secret: bytes("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")))
        for u: UInt8 in [0, 1] {
            let lowOrder = [u] + [UInt8](repeating: 0, count: 31)
            XCTAssertEqual(alice.sharedSecret(with: lowOrder), [UInt8](repeating: 0, count: 32))
            let agreement = try Curve25519KeyAgreement()
            XCTAssertNil(agreement.sharedSecret(serverPublicKey: lowOrder))
            XCTAssertThrowsError(try agreement.hashedValues(serverValue: lowOrder))
        }
    }

    /// `ssh` reads a server value's bit 255 as 2^255 = 19 (mod p), where RFC 7748 clears it (a
    /// fake server showed `ssh` accepting ((u - 19) mod p) + 2^255 for a real value u, and failing
    /// on u + 2^255 with "incorrect signature"). The exchange must reach the same secret as the
    /// server in the first case and a different one in the second, as `ssh` does.
    func testAServerValueWithBit255SetIsReadAsSSHReadsIt() throws {
        for _ in 0..<50 {
            let server = X25519KeyPair()
            let agreement = try Curve25519KeyAgreement()
            let real = try XCTUnwrap(server.sharedSecret(with: agreement.publicKey))
            XCTAssertEqual(agreement.sharedSecret(serverPublicKey: server.publicKey), real, "an honest value passes unchanged")
            // (u - 19) with bit 255 set; a fresh public value is at least 19 but for odds of 2^-250.
            var shifted = server.publicKey
            var borrow = 19
            for index in 0..<32 where borrow != 0 {
                let difference = Int(shifted[index]) - borrow
                shifted[index] = UInt8(truncatingIfNeeded: difference)
                borrow = difference < 0 ? 1 : 0
            }
            XCTAssertEqual(borrow, 0)
            shifted[31] |= 0x80
            XCTAssertEqual(Curve25519KeyAgreement.openSSHReading(shifted), server.publicKey)
            XCTAssertEqual(agreement.sharedSecret(serverPublicKey: shifted), real, "ssh's reading of u - 19 + 2^255 is u")
            var masked = server.publicKey
            masked[31] |= 0x80
            XCTAssertNotEqual(agreement.sharedSecret(serverPublicKey: masked), real, "ssh reads u + 2^255 as u + 19, not u")
        }
        // The carry past bit 255 again: 2^256 - 1 is 37 modulo p (2^256 = 2 · 2^255 = 38).
        let top = [UInt8](repeating: 0xff, count: 32)
        XCTAssertEqual(Curve25519KeyAgreement.openSSHReading(top), [37] + [UInt8](repeating: 0, count: 31))
    }
}
