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
}
