import XCTest
@testable import FleetTrustSSH
import FleetTrustCore

/// A server KEXINIT read again (another connection to the same server, another cookie) gets the
/// lists read the first time, and only when every byte after the cookie is the same: any other
/// byte, the message number, or a KEXINIT the reader refuses is read in full, as if never seen.
final class ServerProposalReuseTests: XCTestCase {
    private func kexInit(_ hostKeys: [String], cookie: UInt8, guess: Bool = false) -> [UInt8] {
        var payload = KexInit(clientOffering: hostKeys).payload
        payload.replaceSubrange(1..<17, with: [UInt8](repeating: cookie, count: 16))
        if guess { payload[payload.count - 5] = 1 }
        return payload
    }

    func testTheSameListsUnderAnotherCookieAreReadOnceAndEachChangeIsReadAnew() throws {
        let first = try KexInit(parsing: kexInit(["ssh-ed25519", "rsa-sha2-512"], cookie: 1))
        let again = try KexInit(parsing: kexInit(["ssh-ed25519", "rsa-sha2-512"], cookie: 2))
        XCTAssertEqual(again.lists, first.lists)
        XCTAssertEqual(again[.hostKey], ["ssh-ed25519", "rsa-sha2-512"])
        XCTAssertNotNil(RecentServerProposals.current.current?.proposal(for: kexInit(["ssh-ed25519", "rsa-sha2-512"], cookie: 3)))

        // One name changed by one byte, and the guess flag alone: each is its own KEXINIT.
        let other = try KexInit(parsing: kexInit(["ssh-ed25519", "rsa-sha2-256"], cookie: 1))
        XCTAssertEqual(other[.hostKey], ["ssh-ed25519", "rsa-sha2-256"])
        let guessing = try KexInit(parsing: kexInit(["ssh-ed25519", "rsa-sha2-512"], cookie: 1, guess: true))
        XCTAssertTrue(guessing.firstKexPacketFollows)
        XCTAssertFalse(try KexInit(parsing: kexInit(["ssh-ed25519", "rsa-sha2-512"], cookie: 4)).firstKexPacketFollows)

        // The same bytes under another message number, or cut short, are refused as before.
        var notKexInit = kexInit(["ssh-ed25519", "rsa-sha2-512"], cookie: 5)
        notKexInit[0] = 21
        XCTAssertThrowsError(try KexInit(parsing: notKexInit))
        XCTAssertThrowsError(try KexInit(parsing: Array(kexInit(["ssh-ed25519", "rsa-sha2-512"], cookie: 6).dropLast())))
    }

    func testTheCleanedNamesForTheReportComeWithTheListsReadBefore() throws {
        // A server's names are untrusted text: a control byte and a long name are cleaned for the
        // report, and a second read of the same KEXINIT reports them exactly as the first.
        let hostile = "evil\u{1b}[31m@example.org"
        let long = String(repeating: "x", count: 80) + "@example.org"
        let first = try KexInit(parsing: kexInit(["ssh-ed25519", hostile, long], cookie: 10))
        XCTAssertEqual(first[.hostKey], ["ssh-ed25519", hostile, long], "the lists keep the server's bytes")
        XCTAssertEqual(first.reported.hostKey, ["ssh-ed25519", Sanitizer.clean(hostile, limit: 64), Sanitizer.clean(long, limit: 64)])
        XCTAssertFalse(first.reported.hostKey[1].contains("\u{1b}"))
        XCTAssertEqual(first.reported.keyExchange, first[.keyExchange])
        let again = try KexInit(parsing: kexInit(["ssh-ed25519", hostile, long], cookie: 11))
        XCTAssertEqual(again.reported.hostKey, first.reported.hostKey)
        XCTAssertEqual(again.reported.keyExchange, first.reported.keyExchange)
        XCTAssertTrue(KexInit(clientOffering: ["ssh-ed25519"]).reported.hostKey.isEmpty, "ours carries none")
    }

    func testARefusedKexInitIsNeverKeptAndTheKeptOnesAreBounded() throws {
        var withNul = kexInit(["ssh-ed25519", "ecdsa-sha2-nistp256"], cookie: 7)
        let at = try XCTUnwrap(withNul.firstIndex(of: UInt8(ascii: "e")))
        withNul[at] = 0
        for _ in 0..<2 { XCTAssertThrowsError(try KexInit(parsing: withNul), "a NUL inside a name-list, each time") }
        XCTAssertNil(RecentServerProposals.current.current?.proposal(for: withNul))

        let many = (0..<(RecentServerProposals.capacity + 1)).map { kexInit(["ssh-ed25519", "name\($0)@example.org"], cookie: 8) }
        for (index, payload) in many.enumerated() {
            XCTAssertEqual(try KexInit(parsing: payload)[.hostKey].last, "name\(index)@example.org")
        }
        let kept = RecentServerProposals.current.current
        XCTAssertNil(kept?.proposal(for: many[0]), "the oldest went")
        XCTAssertNotNil(kept?.proposal(for: many[RecentServerProposals.capacity]))
        let large = kexInit(["ssh-ed25519"] + (0..<300).map { "name\($0)@example.org" }, cookie: 9)
        XCTAssertGreaterThan(large.count, RecentServerProposals.largest)
        XCTAssertEqual(try KexInit(parsing: large)[.hostKey].count, KexInit.consideredNames)
        XCTAssertNil(kept?.proposal(for: large))
    }
}
