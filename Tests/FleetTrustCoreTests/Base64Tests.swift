import Foundation
import XCTest
@testable import FleetTrustCore

/// Key lines and fingerprints are base64 written by hand: byte for byte what Foundation writes,
/// padded and unpadded, at every length a key, certificate or digest can have, over every byte value.
final class Base64Tests: XCTestCase {
    func testEncodingIsFoundationsAtEveryLength() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...2048 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let foundation = Data(bytes).base64EncodedString()
            XCTAssertEqual(Base64.encode(bytes), foundation, "length \(length)")
            XCTAssertEqual(Base64.encode(bytes, padded: false), String(foundation.prefix { $0 != "=" }), "length \(length), unpadded")
        }
    }

    func testEveryByteValueInEveryPositionRoundTrips() {
        for offset in 0..<3 {
            let bytes = [UInt8](repeating: 0, count: offset) + (0...255).map { UInt8($0) }
            XCTAssertEqual(Base64.decode(Base64.encode(bytes)), bytes)
            XCTAssertEqual(Base64.decode(Base64.encode(bytes, padded: false)), bytes)
            XCTAssertEqual(Base64.encode(bytes), Data(bytes).base64EncodedString())
        }
    }

    func testTheStandardsVectorsAndADigestsLength() {
        // RFC 4648's vectors, and a SHA-256 digest's 32 bytes: 43 characters without padding.
        let vectors = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=", "foobar": "Zm9vYmFy"]
        for (text, encoded) in vectors { XCTAssertEqual(Base64.encode(Array(text.utf8)), encoded) }
        XCTAssertEqual(Base64.encode([UInt8](repeating: 0xff, count: 32), padded: false).utf8.count, 43)
    }
}
