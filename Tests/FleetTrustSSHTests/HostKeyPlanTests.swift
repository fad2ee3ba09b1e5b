import XCTest
@testable import FleetTrustSSH

final class HostKeyPlanTests: XCTestCase {
    func testWithoutServerListAsksForEachCommonTypeOnce() {
        var plan = HostKeyPlan()
        XCTAssertEqual(plan.next(), "ssh-ed25519")
        XCTAssertEqual(plan.next(), "ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521")
        XCTAssertEqual(plan.next(), "rsa-sha2-512")
        XCTAssertNil(plan.next())
    }

    func testServerListShrinksPlanToOfferedTypesNotYetFound() {
        var plan = HostKeyPlan()
        XCTAssertEqual(plan.next(), "ssh-ed25519")
        plan.found(keyType: "ssh-ed25519")
        _ = plan.next()
        plan.learn(serverAlgorithms: ["ssh-ed25519", "ecdsa-sha2-nistp384", "rsa-sha2-256",
                                      "ssh-ed25519-cert-v01@openssh.com", "ssh-dss"])
        XCTAssertEqual(plan.next(), "ecdsa-sha2-nistp384")
        XCTAssertEqual(plan.next(), "rsa-sha2-256")
        XCTAssertNil(plan.next())
    }

    func testSHA1RSAIsAskedForOnlyWhenNothingBetterIsOffered() {
        var plan = HostKeyPlan()
        _ = plan.next()
        plan.learn(serverAlgorithms: ["ssh-rsa"])
        XCTAssertEqual(plan.next(), "ssh-rsa")
        XCTAssertNil(plan.next())

        var better = HostKeyPlan()
        _ = better.next()
        better.learn(serverAlgorithms: ["rsa-sha2-512", "ssh-rsa"])
        XCTAssertEqual(better.next(), "rsa-sha2-512")
        XCTAssertNil(better.next())
    }

    func testFoundECDSACurveIsNotAskedForAgain() {
        var plan = HostKeyPlan()
        _ = plan.next()
        _ = plan.next()
        plan.found(keyType: "ecdsa-sha2-nistp256")
        _ = plan.next()
        plan.learn(serverAlgorithms: ["ecdsa-sha2-nistp256", "ecdsa-sha2-nistp521"])
        XCTAssertEqual(plan.next(), "ecdsa-sha2-nistp521")
        XCTAssertNil(plan.next())
    }

    func testOnlyTheFirstServerListIsUsed() {
        var plan = HostKeyPlan()
        _ = plan.next()
        plan.learn(serverAlgorithms: ["ssh-ed25519"])
        plan.learn(serverAlgorithms: ["rsa-sha2-512"])
        XCTAssertEqual(plan.next(), "ssh-ed25519")
        XCTAssertNil(plan.next())
    }
}
