import Foundation
import GRDB
import XCTest
@testable import FleetTrustCore

/// The history store on real SQLite files: what is recorded comes back, and a file that is not
/// ours is refused in one sentence and left byte for byte as it was.
final class HistoryStoreTests: XCTestCase {
    private var directory: StoreTestDirectory!

    override func setUpWithError() throws { directory = try StoreTestDirectory() }
    override func tearDown() { try? FileManager.default.removeItem(atPath: directory.path) }

    private func sighting(_ host: String, _ keys: [(String, String)], at time: UInt64, complete: Bool = true) -> HistorySighting {
        HistorySighting(host: host, lookup: host, endpoint: "127.0.0.1:22", seenAt: time, source: .scan,
                        keys: keys.map { KeyIdentity(type: $0.0, fingerprint: $0.1) }, complete: complete)
    }

    func testRecordedProbesComeBackAsFirstAndLastSightingsAndTheLatestProbe() throws {
        let path = directory.file("state/fleettrust/history.sqlite")
        let store = try XCTUnwrap(try HistoryStore.open(path: path))
        try store.record([sighting("web1", [("ssh-ed25519", "A"), ("ssh-rsa", "R")], at: 1_000)])
        try store.record([sighting("web1", [("ssh-ed25519", "B")], at: 2_000, complete: false)])
        try store.record([sighting("web1", [("ssh-ed25519", "A")], at: 3_000)])
        let history = try XCTUnwrap(try store.history(for: [InventoryHost(name: "web1"), InventoryHost(name: "never")]).hosts["web1"])
        XCTAssertEqual(history.latest, [KeyIdentity(type: "ssh-ed25519", fingerprint: "A")])
        XCTAssertTrue(history.latestComplete)
        let a = try XCTUnwrap(history.keys.first { $0.key.fingerprint == "A" })
        XCTAssertEqual([a.firstSeen, a.lastSeen, UInt64(a.sightings)], [1_000, 3_000, 2])
        XCTAssertEqual(try store.sightingCount(), 3)
        XCTAssertEqual(try store.sightings(of: "web1", since: 2_000).map(\.seenAt), [2_000, 3_000])
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600, "the history names the user's hosts: private")
        let journal = try DatabaseQueue(path: path).read { try String.fetchOne($0, sql: "PRAGMA journal_mode") }
        XCTAssertEqual(journal, "wal")
    }

    func testAStoreHoldingNoKeyRemembersNoHostUntilOneIsRecorded() throws {
        let store = try XCTUnwrap(try HistoryStore.open(path: directory.file("h.sqlite")))
        let hosts = [InventoryHost(name: "web1"), InventoryHost(name: "web2")]
        XCTAssertTrue(try store.history(for: hosts).hosts.isEmpty, "a first scan's store remembers nothing")
        try store.record([sighting("web1", [], at: 1_000, complete: false)])
        XCTAssertTrue(try store.history(for: hosts).hosts.isEmpty, "a sighting of no key is no key remembered")
        try store.record([sighting("web2", [("ssh-ed25519", "A")], at: 2_000)])
        let remembered = try store.history(for: hosts).hosts
        XCTAssertEqual(Set(remembered.keys), ["web2"])
        XCTAssertEqual(remembered["web2"]?.latest, [KeyIdentity(type: "ssh-ed25519", fingerprint: "A")])
    }

    func testTheTimelineShowsARevertedKeyAsASecondPeriod() throws {
        let store = try XCTUnwrap(try HistoryStore.open(path: directory.file("h.sqlite")))
        for (time, key) in [(1_000, "A"), (2_000, "A"), (3_000, "B"), (4_000, "A")] as [(UInt64, String)] {
            try store.record([sighting("web1", [("ssh-ed25519", key)], at: time)])
        }
        let timeline = HostTimeline(host: "web1", sightings: try store.sightings(of: "web1"))
        XCTAssertEqual(timeline.periods.map(\.fingerprint), ["A", "B", "A"])
        XCTAssertEqual(timeline.periods.map(\.sightings), [2, 1, 1])
        XCTAssertEqual(timeline.periods.map(\.returned), [false, false, true])
        XCTAssertEqual(timeline.periods.map(\.current), [false, false, true])
        XCTAssertEqual(timeline.periods[0].firstSeen, "1970-01-01T00:00:01Z")
        XCTAssertTrue(timeline.table().contains("REVERTED"))
    }

    func testAFileThatIsNotSQLiteIsRefusedAndLeftByteForByte() throws {
        for (name, content) in [("text", Array("my notes\n".utf8)), ("damaged", Array("SQLite format 3\0".utf8) + [UInt8](repeating: 7, count: 3000))] {
            try Data(content).write(to: URL(fileURLWithPath: directory.file(name)))
            for readOnly in [false, true] {
                XCTAssertThrowsError(try HistoryStore.open(path: directory.file(name), readOnly: readOnly)) { error in
                    let sentence = "\(error)"
                    XCTAssertTrue(sentence.hasPrefix(directory.file(name) + ": not a fleettrust history database"), sentence)
                    XCTAssertFalse(sentence.contains("\n"))
                }
            }
            XCTAssertEqual(directory.bytes(name), content, name)
            XCTAssertEqual(directory.entries().filter { $0.hasPrefix(name) }, [name], "no -wal or -shm beside it")
        }
    }

    func testAnotherProgramsDatabaseIsRefusedAndNotTouched() throws {
        let path = directory.file("app.sqlite")
        try DatabaseQueue(path: path).write { try $0.execute(sql: "CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('x')") }
        let before = directory.bytes("app.sqlite")
        XCTAssertThrowsError(try HistoryStore.open(path: path)) { error in
            XCTAssertEqual(error as? HistoryError, .foreign(path: path))
        }
        XCTAssertEqual(directory.bytes("app.sqlite"), before)
        let journal = try DatabaseQueue(path: path).read { try String.fetchOne($0, sql: "PRAGMA journal_mode") }
        XCTAssertEqual(journal, "delete", "its journal mode was not switched to WAL")
    }

    /// The moment another fleettrust is creating the file: GRDB has made its bookkeeping table,
    /// the first migration (which sets the application id) has not run yet. Seen in a CI run as
    /// one of four processes starting on a fresh file calling it another program's database.
    func testAFileAnotherFleettrustIsCreatingRightNowIsOpenedNotCalledForeign() throws {
        let path = directory.file("h.sqlite")
        try DatabaseQueue(path: path).write {
            try $0.execute(sql: "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
        }
        let store = try XCTUnwrap(try HistoryStore.open(path: path))
        try store.record([sighting("web1", [("ssh-ed25519", "A")], at: 1_000)])
        XCTAssertEqual(try store.sightingCount(), 1)
        let other = directory.file("other.sqlite")
        try DatabaseQueue(path: other).write {
            try $0.execute(sql: "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY); CREATE TABLE notes (t TEXT)")
        }
        XCTAssertThrowsError(try HistoryStore.open(path: other)) { XCTAssertEqual($0 as? HistoryError, .foreign(path: other)) }
    }

    /// A hand-edited file: a time that is not a number, a fingerprint carrying an escape
    /// sequence. Reading it is one error naming the file, never a trap or raw terminal bytes.
    func testHandEditedValuesAreTheFilesDamageNotATrapOrRawText() throws {
        for edit in ["UPDATE host_key SET first_seen = 'abc'", "UPDATE sighting SET seen_at = 'x'",
                     "UPDATE host_key SET fingerprint = 'SHA256:\u{1b}[2J'", "UPDATE sighting_key SET key_type = 'ssh-ed25519\u{1b}]0;x\u{07}'"] {
            let path = directory.file("edited-\(UUID().uuidString.prefix(6)).sqlite")
            let store = try XCTUnwrap(try HistoryStore.open(path: path))
            try store.record([sighting("web1", [("ssh-ed25519", "SHA256:" + String(repeating: "A", count: 43))], at: 1_000)])
            try DatabaseQueue(path: path).write { try $0.execute(sql: edit) }
            let reread = try XCTUnwrap(try HistoryStore.open(path: path))
            var errors: [Error] = []
            do { _ = try reread.history(for: [InventoryHost(name: "web1")]) } catch { errors.append(error) }
            do { _ = try reread.sightings(of: "web1") } catch { errors.append(error) }
            XCTAssertFalse(errors.isEmpty, "\(edit) was read as if it were fine")
            for error in errors {
                XCTAssertTrue(error is HistoryError, "\(edit): \(error)")
                XCTAssertFalse("\(error)".contains("\u{1b}"), "\(edit): \(error)")
            }
        }
    }

    func testAHistoryFromANewerFleettrustIsRefused() throws {
        let path = directory.file("h.sqlite")
        _ = try HistoryStore.open(path: path)
        try DatabaseQueue(path: path).write { try $0.execute(sql: "INSERT INTO grdb_migrations VALUES ('v99-future')") }
        XCTAssertThrowsError(try HistoryStore.open(path: path)) { error in
            XCTAssertEqual(error as? HistoryError, .newerSchema(path: path))
        }
    }

    func testReadOnlyOpensNoMissingFileAndWritesNone() throws {
        XCTAssertNil(try HistoryStore.open(path: directory.file("none.sqlite"), readOnly: true))
        XCTAssertEqual(directory.entries(), [])
    }

    func testSinceTakesDurationsDatesAndRFC3339Times() {
        let now: UInt64 = 1_800_000_000_000
        XCTAssertEqual(HistoryTime.since("90s", now: now), now - 90_000)
        XCTAssertEqual(HistoryTime.since("2d", now: now), now - 2 * 86_400_000)
        XCTAssertEqual(HistoryTime.since("2026-11-01", now: now), 1_793_491_200_000)
        XCTAssertEqual(HistoryTime.since("2026-11-01T10:00:00Z", now: now), 1_793_527_200_000)
        for bad in ["", "3x", "d", "yesterday", "2026-13-01"] { XCTAssertNil(HistoryTime.since(bad, now: now), bad) }
    }
}
