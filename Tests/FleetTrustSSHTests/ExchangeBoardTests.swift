import XCTest
import FleetTrustCore
@testable import FleetTrustSSH

/// The connections opened to one server side by side ask for each key type exactly once, and a
/// server shedding load is told apart from one that is broken.
final class ExchangeBoardTests: XCTestCase {
    func testAServerWithACertificateNeedsFourExchangesAndEachTypeIsClaimedOnce() {
        let offered = ["ssh-ed25519-cert-v01@openssh.com", "ssh-ed25519", "ecdsa-sha2-nistp256", "rsa-sha2-512", "rsa-sha2-256"]
        let board = ExchangeBoard()
        var claimed: [ExchangeBoard.Exchange] = []
        while let exchange = board.claim(serverAlgorithms: offered) { claimed.append(exchange) }
        XCTAssertEqual(claimed.map(\.index), [0, 1, 2, 3])
        XCTAssertEqual(claimed[0].offered, CertificateFirstProbe.certificatesFirst, "the first offers certificates first")
        XCTAssertNil(claimed[0].libsshFallback, "libssh cannot fetch the certificate the first exchange gets")
        XCTAssertEqual(claimed.dropFirst().map(\.offered), [["ssh-ed25519"], ["ecdsa-sha2-nistp256"], ["rsa-sha2-512"]])
        XCTAssertEqual(claimed.dropFirst().map(\.libsshFallback), ["ssh-ed25519", "ecdsa-sha2-nistp256", "rsa-sha2-512"])
        XCTAssertTrue(board.unclaimed.isEmpty)
    }

    func testWithoutCertificatesTheFirstExchangeTakesThePreferredPlainTypeAndNoTypeIsAskedTwice() {
        let offered = ["rsa-sha2-512", "ecdsa-sha2-nistp256", "ssh-ed25519"]
        let exchanges = ExchangeBoard.exchanges(for: offered)
        XCTAssertEqual(exchanges.count, 3)
        XCTAssertEqual(exchanges[0].libsshFallback, "ssh-ed25519", "certificates first, then ed25519: the server has ed25519")
        XCTAssertEqual(exchanges.dropFirst().map(\.offered), [["ecdsa-sha2-nistp256"], ["rsa-sha2-512"]])
    }

    func testExchangesTheFirstRoundCouldNotTakeAreLeftInOrder() {
        let board = ExchangeBoard()
        let offered = ["ssh-ed25519-cert-v01@openssh.com", "ecdsa-sha2-nistp256-cert-v01@openssh.com", "ssh-ed25519",
                       "ecdsa-sha2-nistp256", "rsa-sha2-256"]
        for _ in 0..<3 { XCTAssertNotNil(board.claim(serverAlgorithms: offered)) }
        XCTAssertEqual(board.unclaimed.map(\.offered), [["ecdsa-sha2-nistp256"], ["rsa-sha2-256"]])
    }

    func testTheExchangesBeyondTheFirstRoundAreTakenOnceAsSoonAsTheServersListIsKnown() {
        let board = ExchangeBoard()
        let offered = ["ssh-ed25519-cert-v01@openssh.com", "ecdsa-sha2-nistp256-cert-v01@openssh.com", "ssh-ed25519",
                       "ecdsa-sha2-nistp256", "rsa-sha2-256"]
        XCTAssertEqual(board.claim(serverAlgorithms: offered)?.index, 0)
        let surplus = board.claimSurplus(beyond: 3)
        XCTAssertEqual(surplus.map(\.index), [3, 4])
        XCTAssertEqual(surplus.map(\.offered), [["ecdsa-sha2-nistp256"], ["rsa-sha2-256"]])
        XCTAssertTrue(board.claimSurplus(beyond: 3).isEmpty, "the surplus is started once, by one connection")
        XCTAssertEqual(board.claim(serverAlgorithms: offered)?.index, 1)
        XCTAssertEqual(board.claim(serverAlgorithms: offered)?.index, 2)
        XCTAssertNil(board.claim(serverAlgorithms: offered), "a surplus exchange is never claimed twice")
        XCTAssertTrue(board.unclaimed.isEmpty)
    }

    func testAServerNeedingNoMoreExchangesThanConnectionsHasNoSurplus() {
        let board = ExchangeBoard()
        _ = board.claim(serverAlgorithms: ["ssh-ed25519", "ecdsa-sha2-nistp256", "rsa-sha2-512"])
        XCTAssertTrue(board.claimSurplus(beyond: 3).isEmpty)
        XCTAssertEqual(board.unclaimed.count, 2)
    }

    func testOnlyAnEarlyCloseOrExceededMaxStartupsIsARefusalForLoad() {
        XCTAssertTrue(TargetPoliteness.isRefusalForLoad(ProbeFailures.closedBeforeBanner()))
        XCTAssertTrue(TargetPoliteness.isRefusalForLoad(ProbeFailure(stage: .banner, code: .notSSH,
            message: "the server does not speak SSH; it said \"Exceeded MaxStartups\"")))
        XCTAssertFalse(TargetPoliteness.isRefusalForLoad(ProbeFailure(stage: .banner, code: .notSSH,
            message: "the server does not speak SSH; it said \"HTTP/1.1 400 Bad Request\"")))
        XCTAssertFalse(TargetPoliteness.isRefusalForLoad(ProbeFailures.bannerTimeout))
        XCTAssertFalse(TargetPoliteness.isRefusalForLoad(ProbeFailure(stage: .keyExchange, code: .connectionClosed,
                                                                      message: "the server closed the connection")))
    }

    func testTheDecidingConnectionStandsForTheExchangeNegotiatingItsAlgorithmAndTheRestFollow() {
        let plain = ["ssh-ed25519", "ecdsa-sha2-nistp256", "rsa-sha2-512", "rsa-sha2-256"]
        let usual = ExchangeBoard.followers(of: "ssh-ed25519", for: plain)
        XCTAssertEqual(usual.standIns.map(\.index), [0], "the certificates-first offer negotiates Ed25519 with a plain server")
        XCTAssertEqual(usual.followers.map(\.offered), [["ecdsa-sha2-nistp256"], ["rsa-sha2-512"]])

        // ssh put RSA first (a recorded RSA key): the certificates-first exchange still follows.
        let recordedRSA = ExchangeBoard.followers(of: "rsa-sha2-512", for: plain)
        XCTAssertEqual(recordedRSA.standIns.map(\.offered), [["rsa-sha2-512"]])
        XCTAssertEqual(recordedRSA.followers.map(\.index), [0, 1])

        // A certificate: its plain key is an exchange of its own, as before.
        let certified = ExchangeBoard.followers(of: "ssh-ed25519-cert-v01@openssh.com",
                                                for: ["ssh-ed25519-cert-v01@openssh.com"] + plain)
        XCTAssertEqual(certified.standIns.map(\.index), [0])
        XCTAssertEqual(certified.followers.map(\.offered), [["ssh-ed25519"], ["ecdsa-sha2-nistp256"], ["rsa-sha2-512"]])

        // An algorithm no exchange negotiates (a user's HostKeyAlgorithms ssh-rsa): every exchange follows.
        XCTAssertTrue(ExchangeBoard.followers(of: "ssh-rsa", for: plain + ["ssh-rsa"]).standIns.isEmpty)
    }
}
