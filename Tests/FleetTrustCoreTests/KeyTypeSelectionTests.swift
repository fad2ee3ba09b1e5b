import XCTest
@testable import FleetTrustCore

/// `discover -t`'s grammar, as `ssh-keyscan -t` takes it.
final class KeyTypeSelectionTests: XCTestCase {
    func testShortAndFullNamesSelectTheSameTypesAndAnyECDSANameSelectsEveryCurve() throws {
        XCTAssertEqual(try KeyTypeSelection(parsing: "ed25519,rsa"), try KeyTypeSelection(parsing: "ssh-ed25519,rsa-sha2-512"))
        let ecdsa = try KeyTypeSelection(parsing: "ecdsa-sha2-nistp384")
        XCTAssertEqual(ecdsa.types, ["ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521"])
        XCTAssertTrue(try KeyTypeSelection(parsing: "ed25519").includes(TestKeys.a))
        XCTAssertFalse(try KeyTypeSelection(parsing: "rsa").includes(TestKeys.a))
    }

    func testTypesThatCannotBeVerifiedAreNamedAndUnknownOnesRefused() throws {
        let selection = try KeyTypeSelection(parsing: "dsa,ed25519-sk,ed25519,ssh-dss")
        XCTAssertEqual(selection.unverifiable, ["dsa"])
        XCTAssertEqual(selection.types, ["ssh-ed25519", "sk-ssh-ed25519@openssh.com"])
        XCTAssertThrowsError(try KeyTypeSelection(parsing: "ed448")) { XCTAssertTrue("\($0)".contains("\"ed448\""), "\($0)") }
        XCTAssertThrowsError(try KeyTypeSelection(parsing: ""))
    }
}
