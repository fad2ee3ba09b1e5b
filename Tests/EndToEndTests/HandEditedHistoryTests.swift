import Foundation
import GRDB
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// A history database edited by hand (through SQL, as `sqlite3` would) is input like any other:
/// a huge count or a time out of range is one sentence naming the file, never an arithmetic trap,
/// and names carrying escape sequences come out cleaned in every format. A database made through
/// a symbolic link is private like any other.
final class HandEditedHistoryTests: XCTestCase {
    private static let fleet = Result { try TestFleet.start(hosts: 1) }
    private var directory = ""

    override class func tearDown() {
        if case .success(let fleet) = fleet { fleet.stop() }
        super.tearDown()
    }

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "ft-edited-history-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private var history: String { directory + "/history.sqlite" }

    private func fleettrust(_ arguments: [String]) throws -> ProgramRun {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = directory + "/state"
        environment["XDG_CONFIG_HOME"] = directory
        return try ProgramRun.run(BuiltProducts.fleettrust, arguments, limit: 60, environment: environment)
    }

    private func scan(_ fleet: TestFleet) throws -> ProgramRun {
        try fleettrust(["scan", "--inventory", fleet.inventoryPath, "--known-hosts", fleet.knownHostsPath,
                        "--history", history, "--format", "json", "--timeout", "10"])
    }

    /// A history with one real probe of the fleet's host, then `sql` applied to it; returns the
    /// host's inventory name.
    @discardableResult
    private func recordedThenEdited(_ fleet: TestFleet, _ sql: String) throws -> String {
        try? FileManager.default.removeItem(atPath: history)
        let first = try scan(fleet)
        XCTAssertNotEqual(first.status, 64, first.stderrText)
        try DatabaseQueue(path: history).write { try $0.execute(sql: sql) }
        return try XCTUnwrap(try RecordedScan.decode(Data(first.stdout)).hosts.first?.name)
    }

    func testHugeCountsAndTimesOutOfRangeAreOneSentenceNotATrap() throws {
        let fleet = try Self.fleet.get()
        for (edit, words) in [("UPDATE host_key SET sightings = 9223372036854775807", "a recorded count is out of range"),
                              ("UPDATE host_key SET sightings = -3", "a recorded count is out of range"),
                              ("UPDATE host_key SET first_seen = -86400000", "a recorded time is out of range"),
                              ("UPDATE host_key SET last_seen = 9223372036854775807", "a recorded time is out of range")] {
            try recordedThenEdited(fleet, edit)
            let run = try scan(fleet)
            XCTAssertEqual(run.status, 64, "\(edit): \(run.stderrText)")
            XCTAssertEqual(run.stderrText.filter { $0 == "\n" }.count, 1, "\(edit): \(run.stderrText)")
            XCTAssertTrue(run.stderrText.contains("\(history): not a fleettrust history database (\(words))"),
                          "\(edit): \(run.stderrText)")
        }
    }

    /// The first scan's shortcut (a store holding no key remembers nothing) must not skip the
    /// check of the keys a hand-edited store still holds in its sightings: the scan refuses the
    /// file untouched, as `history` does.
    func testDamagedSightingKeysWithTheSummariesDeletedAreStillDamage() throws {
        let fleet = try Self.fleet.get()
        for edit in ["DELETE FROM host_key; UPDATE sighting_key SET fingerprint = 'SHA256:bad fingerprint'",
                     "DELETE FROM host_key; UPDATE sighting_key SET key_type = key_type || char(27) || '[2J'"] {
            let host = try recordedThenEdited(fleet, edit)
            let sightings = try DatabaseQueue(path: history).read { try Int.fetchOne($0, sql: "SELECT count(*) FROM sighting") }
            let run = try scan(fleet)
            XCTAssertEqual(run.status, 64, "\(edit): \(run.stderrText)")
            XCTAssertTrue(run.stderrText.contains("\(history): not a fleettrust history database (a recorded key is damaged)"),
                          "\(edit): \(run.stderrText)")
            let after = try DatabaseQueue(path: history).read { try Int.fetchOne($0, sql: "SELECT count(*) FROM sighting") }
            XCTAssertEqual(after, sightings, "\(edit): the damaged store is left untouched")
            XCTAssertEqual(try fleettrust(["history", host, "--history", history]).status, 64, "\(edit): scan and history agree")
        }
    }

    func testEscapeSequencesInRecordedNamesComeOutCleanedInTableAndJSON() throws {
        let fleet = try Self.fleet.get()
        let host = try recordedThenEdited(fleet, """
            UPDATE sighting SET endpoint = 'evil' || char(27) || ']52;c;cm0gLXJmIH4=' || char(7) || char(27) || '[2J',
                                source = 'scan' || char(27) || '[31m'
            """)
        for format in ["table", "json"] {
            let run = try fleettrust(["history", host, "--history", history, "--format", format])
            XCTAssertEqual(run.status, 0, "\(format): \(run.stderrText)")
            XCTAssertFalse(run.stdout.contains(0x1b) || run.stdout.contains(0x07), "\(format): raw control bytes in \(run.stdoutText)")
            XCTAssertTrue(run.stdoutText.contains("evil?]52;c;cm0gLXJmIH4=??[2J"), "\(format): \(run.stdoutText)")
        }
        let scanned = try scan(fleet)
        XCTAssertNotEqual(scanned.status, 64, "an odd endpoint is no damage to drift: \(scanned.stderrText)")
        XCTAssertFalse(scanned.stdout.contains(0x1b))
    }

    func testAHistoryMadeThroughASymlinkIsPrivateWithItsWALAndSHM() throws {
        let umask = Glibc.umask(0o022)
        defer { Glibc.umask(umask) }
        symlink(directory + "/kept/real.sqlite", history)
        try FileManager.default.createDirectory(atPath: directory + "/kept", withIntermediateDirectories: false)
        let store = try XCTUnwrap(try HistoryStore.open(path: history))
        try store.record([HistorySighting(host: "web1", endpoint: "127.0.0.1:22", seenAt: 1_000, source: .scan,
                                          keys: [KeyIdentity(type: "ssh-ed25519", fingerprint: "SHA256:A")], complete: true)])
        var link = stat()
        lstat(history, &link)
        XCTAssertEqual(link.st_mode & S_IFMT, S_IFLNK, "the link is kept")
        for name in ["real.sqlite", "real.sqlite-wal", "real.sqlite-shm"] {
            var info = stat()
            XCTAssertEqual(stat(directory + "/kept/" + name, &info), 0, "\(name) exists while the store is open")
            XCTAssertEqual(info.st_mode & 0o777, 0o600, name)
        }
        XCTAssertEqual(try store.sightingCount(), 1)
    }
}
