import XCTest
@testable import FleetTrustSSH

/// The followers planned once per server list are the ones the board plans each time, and the
/// servers' lists, which are untrusted, cannot grow the cache past its bound.
final class FollowerPlansTests: XCTestCase {
    private let plain = ["ssh-ed25519", "ecdsa-sha2-nistp256", "rsa-sha2-512", "rsa-sha2-256"]

    func testAKeptPlanIsTheBoardsPlanForTheSameQuestion() {
        let plans = FollowerPlans()
        let questions: [(String, [String])] = [
            ("ssh-ed25519", plain), ("rsa-sha2-512", plain), ("ssh-rsa", plain + ["ssh-rsa"]),
            ("ssh-ed25519-cert-v01@openssh.com", ["ssh-ed25519-cert-v01@openssh.com"] + plain),
        ]
        for _ in 0..<3 {
            for (negotiated, offered) in questions {
                let kept = plans.plan(negotiated: negotiated, offered: offered)
                let fresh = ExchangeBoard.followers(of: negotiated, for: offered)
                XCTAssertEqual(Self.summary(kept.standIns), Self.summary(fresh.standIns), "\(negotiated)")
                XCTAssertEqual(Self.summary(kept.followers), Self.summary(fresh.followers), "\(negotiated)")
            }
        }
        XCTAssertEqual(plans.count, questions.count, "each question is planned once and kept")
    }

    func testTheSameAlgorithmAgainstAnotherListIsAnotherQuestion() {
        let plans = FollowerPlans()
        let withRSA = plans.plan(negotiated: "ssh-ed25519", offered: plain)
        let withoutRSA = plans.plan(negotiated: "ssh-ed25519", offered: ["ssh-ed25519", "ecdsa-sha2-nistp256"])
        XCTAssertEqual(withRSA.followers.map(\.offered), [["ecdsa-sha2-nistp256"], ["rsa-sha2-512"]])
        XCTAssertEqual(withoutRSA.followers.map(\.offered), [["ecdsa-sha2-nistp256"]])
        XCTAssertEqual(plans.count, 2)
    }

    func testListsBeyondTheBoundArePlannedEachTimeAndNotKept() {
        let plans = FollowerPlans(capacity: 4)
        for server in 0..<20 {
            let offered = plain + ["odd-\(server)@example.com"]
            let plan = plans.plan(negotiated: "ssh-ed25519", offered: offered)
            XCTAssertEqual(plan.followers.map(\.offered), [["ecdsa-sha2-nistp256"], ["rsa-sha2-512"]], "server \(server)")
        }
        XCTAssertEqual(plans.count, 4)
    }

    private static func summary(_ exchanges: [ExchangeBoard.Exchange]) -> [String] {
        exchanges.map { "\($0.index) \($0.offered.joined(separator: ",")) \($0.libsshFallback ?? "-")" }
    }
}
