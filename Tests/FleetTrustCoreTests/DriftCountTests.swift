import XCTest
@testable import FleetTrustCore

/// Drift counts on from numbers a history file holds: the largest count a caller can hand the
/// judge stays the largest, it never traps.
final class DriftCountTests: XCTestCase {
    func testTheLargestCountOfAPresentedKeyStaysTheLargestInsteadOfTrapping() {
        let key = KeyIdentity(type: "ssh-ed25519", fingerprint: "SHA256:A")
        let history = HostHistory(keys: [KeyHistory(key: key, firstSeen: 0, lastSeen: .max, lastSighting: .max, sightings: .max)],
                                  latest: [key], latestComplete: true)
        let drift = HostDrift.judge(presented: [key], offered: nil, complete: true, history: history, now: 5)
        XCTAssertEqual(drift.kind, DriftKind.none)
        XCTAssertEqual(drift.seen(key)?.sightings, .max)
        XCTAssertEqual(drift.seen(key)?.lastSeen, .max)
    }
}
