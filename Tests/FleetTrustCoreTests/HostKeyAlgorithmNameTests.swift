import XCTest
@testable import FleetTrustCore

/// The key type an algorithm name in a host-key list selects, as `ssh` reads it: every key type
/// under its own name, RSA also under its SHA-2 signature names (plain and certificate), and no
/// type for any other name.
final class HostKeyAlgorithmNameTests: XCTestCase {
    func testEveryTypeIsSelectedByItsOwnNameAndRSAByItsSignatureNames() {
        for type in KeyType.allCases { XCTAssertEqual(HostKeyAlgorithms.keyType(ofAlgorithm: type.name), type, type.name) }
        XCTAssertEqual(HostKeyAlgorithms.keyType(ofAlgorithm: "rsa-sha2-256"), .rsa)
        XCTAssertEqual(HostKeyAlgorithms.keyType(ofAlgorithm: "rsa-sha2-512"), .rsa)
        XCTAssertEqual(HostKeyAlgorithms.keyType(ofAlgorithm: "rsa-sha2-256-cert-v01@openssh.com"), .rsaCert)
        XCTAssertEqual(HostKeyAlgorithms.keyType(ofAlgorithm: "rsa-sha2-512-cert-v01@openssh.com"), .rsaCert)
    }

    func testOtherNamesSelectNoType() {
        for name in ["", "SSH-ED25519", "ssh-ed25519 ", "rsa-sha2-384", "ssh-rsa-sha256@ssh.com", "curve25519-sha256", "*", "ssh-ed25519,ssh-rsa"] {
            XCTAssertNil(HostKeyAlgorithms.keyType(ofAlgorithm: name), name)
        }
    }
}
