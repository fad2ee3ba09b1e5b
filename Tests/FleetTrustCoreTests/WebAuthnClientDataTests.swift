import XCTest
@testable import FleetTrustCore

/// The clientData of a WebAuthn signature binds the signed data and the origin as OpenSSH 9.2's
/// `webauthn_check_prepare_hash` requires (the real `ssh` is the oracle in KeyEncodingOracleTests).
final class WebAuthnClientDataTests: XCTestCase {
    private let data: [UInt8] = (0..<32).map { UInt8(truncatingIfNeeded: $0 * 7 + 250) }
    private let origin = Array("https://fleettrust.test".utf8)

    private func clientData(challenge: [UInt8]? = nil, origin: [UInt8]? = nil, rest: String = #","crossOrigin":false}"#) -> [UInt8] {
        Array(#"{"type":"webauthn.get","challenge":""#.utf8) + WebAuthnClientData.base64URL(challenge ?? data)
            + Array(#"","origin":""#.utf8) + (origin ?? self.origin) + Array("\"".utf8) + Array(rest.utf8)
    }

    func testTheBoundClientDataIsHashedAndAnythingElseRefused() {
        let bound = clientData()
        XCTAssertEqual(WebAuthnClientData.hash(bound, challenge: data, origin: origin, flags: 0x01, extensions: []), Digest.sha256(bound))
        XCTAssertEqual(WebAuthnClientData.hash(bound, challenge: data, origin: origin + [0], flags: 0, extensions: []), Digest.sha256(bound),
                       "a NUL at the very end of the origin ends it")
        XCTAssertNil(WebAuthnClientData.hash(clientData(challenge: [1] + data.dropFirst()), challenge: data, origin: origin, flags: 0, extensions: []),
                     "another challenge")
        XCTAssertNil(WebAuthnClientData.hash(bound, challenge: data, origin: Array("https://other.test".utf8), flags: 0, extensions: []))
        XCTAssertNil(WebAuthnClientData.hash(bound, challenge: data, origin: [0x61, 0] + origin, flags: 0, extensions: []), "a NUL inside")
        let quoted = Array("a\"b".utf8)
        XCTAssertNil(WebAuthnClientData.hash(clientData(origin: quoted), challenge: data, origin: quoted, flags: 0, extensions: []), "a quote")
        XCTAssertNil(WebAuthnClientData.hash(bound, challenge: data, origin: origin, flags: 0x40, extensions: []), "attested data flag")
        XCTAssertNil(WebAuthnClientData.hash(bound, challenge: data, origin: origin, flags: 0x80, extensions: []), "extensions flagged, none")
        XCTAssertNil(WebAuthnClientData.hash(bound, challenge: data, origin: origin, flags: 0, extensions: [0xa0]), "extensions unflagged")
        XCTAssertNotNil(WebAuthnClientData.hash(bound, challenge: data, origin: origin, flags: 0x80, extensions: [0xa0]))
        XCTAssertNil(WebAuthnClientData.hash(Array(bound.prefix(20)), challenge: data, origin: origin, flags: 0, extensions: []), "cut short")
    }

    func testBase64URLHasTheURLAlphabetAndNoPadding() {
        XCTAssertEqual(String(decoding: WebAuthnClientData.base64URL([0xfb, 0xff]), as: UTF8.self), "-_8")
        XCTAssertEqual(String(decoding: WebAuthnClientData.base64URL([]), as: UTF8.self), "")
    }
}
