import Foundation
import GRDB

/// The fleet's memory: every probe that proved keys, per host and key, in one SQLite file shared
/// by every fleettrust process of the user (people, cron).
///
/// WAL mode, so readers never wait for writers; every write is one short `BEGIN IMMEDIATE`
/// transaction with a bounded busy timeout, so concurrent writers queue instead of failing or
/// losing rows. Calls block: run them on a thread of their own, never on Swift's cooperative pool.
/// A file that is not ours (not SQLite, damaged, another program's, a newer schema) is refused
/// with one sentence and never written to.
public final class HistoryStore: Sendable {
    public let path: String
    private let database: any DatabaseWriter
    private let busySeconds: Double

    /// `$XDG_STATE_HOME/fleettrust/history.sqlite`, else `~/.local/state/fleettrust/history.sqlite`.
    public static func defaultPath(environment: [String: String]) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/fleettrust/history.sqlite" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state/fleettrust/history.sqlite"
    }

    /// Opens (and, writable, creates or upgrades) the store. Read-only, a missing file is nil:
    /// an empty history, and nothing is created.
    ///
    /// Several fleettrust processes opening a new file at once can get SQLITE_BUSY without
    /// SQLite's busy handler ever waiting (switching the new file to WAL, or its first migration,
    /// races the other openers): such an open is tried again, every 50 ms, until `busySeconds`
    /// have passed.
    public static func open(path: String, readOnly: Bool = false, busySeconds: Double = 10) throws -> HistoryStore? {
        try retryingWhileBusy(seconds: busySeconds) { try openOnce(path: path, readOnly: readOnly, busySeconds: busySeconds) }
    }

    /// Runs `body` again every 50 ms while it fails as busy, until `seconds` have passed; then the
    /// busy error stands.
    private static func retryingWhileBusy<T>(seconds: Double, _ body: () throws -> T) throws -> T {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while true {
            do {
                return try body()
            } catch HistoryError.busy(let path, let waited) {
                guard ContinuousClock.now < deadline else { throw HistoryError.busy(path: path, seconds: waited) }
                usleep(50_000)
            }
        }
    }

    private static func openOnce(path: String, readOnly: Bool, busySeconds: Double) throws -> HistoryStore? {
        let exists = FileManager.default.fileExists(atPath: path)
        if readOnly && !exists { return nil }
        if exists { try inspect(path) }
        var configuration = Configuration()
        configuration.busyMode = .timeout(busySeconds)
        configuration.readonly = readOnly
        configuration.label = "fleettrust-history"
        do {
            if readOnly {
                let queue = try DatabaseQueue(path: path, configuration: configuration)
                guard try !queue.read(HistorySchema.migrator.hasCompletedMigrations) else {
                    return HistoryStore(path: path, database: queue, busySeconds: busySeconds)
                }
                // A history of an older version is read through an upgraded copy in memory: reading
                // never writes the file (the next writer upgrades it in place, every row kept).
                let copy = try DatabaseQueue(configuration: Configuration())
                try queue.backup(to: copy)
                try queue.close()
                try HistorySchema.migrator.migrate(copy)
                return HistoryStore(path: path, database: copy, busySeconds: busySeconds)
            }
            try createFile(path)
            let pool = try DatabasePool(path: path, configuration: configuration)
            try migrate(pool, path: path)
            return HistoryStore(path: path, database: pool, busySeconds: busySeconds)
        } catch let error as HistoryError {
            throw error
        } catch {
            throw translate(error, path: path, busySeconds: busySeconds)
        }
    }

    private init(path: String, database: any DatabaseWriter, busySeconds: Double) {
        self.path = path
        self.database = database
        self.busySeconds = busySeconds
    }

    /// Records these probes, all or none, in one transaction. A transaction refused as busy
    /// without SQLite's busy handler waiting (a WAL file another process is just setting up) is
    /// tried again, every 50 ms, until `busySeconds` have passed: nothing of it was written.
    public func record(_ sightings: [HistorySighting]) throws {
        guard !sightings.isEmpty else { return }
        try Self.retryingWhileBusy(seconds: busySeconds) {
            try guarded {
                try database.writeWithoutTransaction { db in
                    try db.inTransaction(.immediate) {
                        let statements = try SightingStatements(db)
                        for sighting in sightings { try statements.insert(sighting) }
                        return .commit
                    }
                }
            }
        }
    }

    /// What the store remembers about these hosts (by the name `ssh` looks each up under): a few
    /// indexed rows per host, in one read transaction, so every host is judged against the same moment.
    public func history(for hosts: [InventoryHost]) throws -> FleetHistory {
        let wanted = Set(hosts.map(\.historyKey))
        return try guarded {
            try database.read { db in
                // A store that holds no key yet (a fleet's first scan) remembers nothing of any
                // host: one query, not two per host. Both tables the reads below take keys from
                // must be empty: a hand-edited store with sightings' keys but no summaries is
                // damaged, and their keys are checked below as ever.
                let holdsKeys = "SELECT EXISTS (SELECT 1 FROM host_key) OR EXISTS (SELECT 1 FROM sighting_key)"
                guard try Bool.fetchOne(db, sql: holdsKeys) == true else { return FleetHistory() }
                var keys: [String: [KeyHistory]] = [:]
                var latest: [String: (keys: Set<KeyIdentity>, complete: Bool)] = [:]
                let byHost = "SELECT lookup, key_type, fingerprint, first_seen, last_seen, last_sighting, sightings FROM host_key"
                let latestKeys = """
                    SELECT l.lookup, l.complete, k.key_type, k.fingerprint FROM host_latest l
                    JOIN sighting_key k ON k.sighting_id = l.sighting_id
                    """
                // Few hosts: indexed lookups; many: one pass over the summaries.
                let few = wanted.count <= 256
                let keyRows = few
                    ? try wanted.flatMap { try Row.fetchAll(db.cachedStatement(sql: byHost + " WHERE lookup = ?"), arguments: [$0]) }
                    : try Row.fetchAll(db, sql: byHost)
                for row in keyRows {
                    let host: String = try row.decode(atIndex: 0)
                    guard wanted.contains(host) else { continue }
                    keys[host, default: []].append(KeyHistory(key: try recordedKey(row, 1), firstSeen: try milliseconds(row, 3),
                                                              lastSeen: try milliseconds(row, 4), lastSighting: try row.decode(atIndex: 5),
                                                              sightings: try count(row, 6)))
                }
                let latestRows = few
                    ? try wanted.flatMap { try Row.fetchAll(db.cachedStatement(sql: latestKeys + " WHERE l.lookup = ?"), arguments: [$0]) }
                    : try Row.fetchAll(db, sql: latestKeys)
                for row in latestRows {
                    let host: String = try row.decode(atIndex: 0)
                    guard wanted.contains(host) else { continue }
                    let complete: Bool = try row.decode(atIndex: 1)
                    latest[host, default: ([], complete)].keys.insert(try recordedKey(row, 2))
                }
                var fleet = FleetHistory()
                for (host, remembered) in keys {
                    let last = latest[host]
                    fleet.hosts[host] = HostHistory(keys: remembered, latest: last?.keys ?? [], latestComplete: last?.complete ?? false)
                }
                return fleet
            }
        }
    }

    /// Columns `index` and `index + 1` as a key's type and fingerprint: printable ASCII of
    /// bounded length, as fleettrust records them. Anything else (a hand-edited file) is the file's
    /// damage, one sentence: never a trap, and never bytes that reach a terminal raw.
    private func recordedKey(_ row: Row, _ index: Int) throws -> KeyIdentity {
        let type: String = try row.decode(atIndex: index), fingerprint: String = try row.decode(atIndex: index + 1)
        for text in [type, fingerprint] where text.isEmpty || text.utf8.count > 128 || !text.utf8.allSatisfy({ (0x21...0x7e).contains($0) }) {
            throw HistoryError.notADatabase(path: path, detail: "a recorded key is damaged")
        }
        return KeyIdentity(type: type, fingerprint: fingerprint)
    }

    /// The latest time a history holds: the end of year 9999, in milliseconds.
    static let latestTime: Int64 = 253_402_300_799_999
    /// More probes of one key than a store could ever record (one a millisecond for 30,000 years).
    static let largestCount: Int64 = 1 << 40

    /// Column `index` as a time in milliseconds since the epoch; one before 1970 or after
    /// year 9999 is not ours (a hand-edited file), and is the file's damage.
    private func milliseconds(_ row: Row, _ index: Int) throws -> UInt64 {
        let value: Int64 = try row.decode(atIndex: index)
        guard (0...Self.latestTime).contains(value) else {
            throw HistoryError.notADatabase(path: path, detail: "a recorded time is out of range")
        }
        return UInt64(value)
    }

    /// Column `index` as a count of probes: at least one, and small enough that counting on
    /// from it can never overflow.
    private func count(_ row: Row, _ index: Int) throws -> Int {
        let value: Int64 = try row.decode(atIndex: index)
        guard (1...Self.largestCount).contains(value) else {
            throw HistoryError.notADatabase(path: path, detail: "a recorded count is out of range")
        }
        return Int(value)
    }

    /// Column `index` as text to show (a host name, an endpoint, a source): cleaned as any text
    /// from outside, so no escape sequence from a hand-edited file reaches a terminal or JSON.
    private static func text(_ row: Row, _ index: Int) throws -> CleanText {
        CleanText(try row.decode(String.self, atIndex: index))
    }

    /// One host's recorded probes since a time (milliseconds), oldest first; `host` is the
    /// inventory name, or else the `address:port` it was probed at.
    public func sightings(of host: String, since: UInt64 = 0) throws -> [StoredSighting] {
        try guarded {
            try database.read { db in
                let rows = try Row.fetchAll(db, sql: """
                    SELECT s.id, s.host, s.endpoint, s.seen_at, s.source, s.complete, k.key_type, k.fingerprint
                    FROM sighting s JOIN sighting_key k ON k.sighting_id = s.id
                    WHERE (s.host = ? OR (s.endpoint = ? AND NOT EXISTS (SELECT 1 FROM sighting n WHERE n.host = ?)))
                      AND s.seen_at >= ?
                    ORDER BY s.id, k.key_type, k.fingerprint
                    """, arguments: [host, host, host, Int64(min(since, UInt64(Int64.max)))])
                var sightings: [StoredSighting] = []
                for row in rows {
                    let id: Int64 = try row.decode(atIndex: 0)
                    let key = try recordedKey(row, 6)
                    if sightings.last?.id == id { sightings[sightings.count - 1].keys.append(key); continue }
                    sightings.append(StoredSighting(id: id, host: try Self.text(row, 1), endpoint: try Self.text(row, 2),
                                                    seenAt: try milliseconds(row, 3), source: try Self.text(row, 4),
                                                    complete: try row.decode(atIndex: 5), keys: [key]))
                }
                return sightings
            }
        }
    }

    /// How many probes the store holds.
    public func sightingCount() throws -> Int {
        try guarded { try database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sighting") ?? 0 } }
    }

    private func guarded<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw Self.translate(error, path: path, busySeconds: busySeconds) }
    }

    /// Refuses, before any write, a file that is not an empty file, not SQLite, damaged, another
    /// program's database or one of a newer schema.
    private static func inspect(_ path: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else { throw HistoryError.unusable(path: path, detail: String(cString: strerror(errno))) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw HistoryError.notADatabase(path: path, detail: "not a regular file") }
        guard info.st_size > 0 else { return }
        guard let handle = FileHandle(forReadingAtPath: path) else { throw HistoryError.unusable(path: path, detail: "cannot read it") }
        let header = (try? handle.read(upToCount: 16)) ?? Data()
        try? handle.close()
        guard header == Data("SQLite format 3\0".utf8) else {
            throw HistoryError.notADatabase(path: path, detail: "no SQLite header")
        }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            try queue.read { db in
                let id = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
                // GRDB's own bookkeeping table is made before the first migration, which sets the
                // application id: another fleettrust creating this file at this very moment
                // leaves it alone, and is not another program.
                let tables = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE tbl_name != 'grdb_migrations'") ?? 0
                if id != HistorySchema.applicationID {
                    if tables > 0 || id != 0 { throw HistoryError.foreign(path: path) }
                    return
                }
                if try HistorySchema.migrator.hasBeenSuperseded(db) { throw HistoryError.newerSchema(path: path) }
                _ = try Int.fetchOne(db, sql: "SELECT 1 FROM host_key LIMIT 1")
            }
        } catch let error as HistoryError {
            throw error
        } catch {
            throw translate(error, path: path, busySeconds: 10)
        }
    }

    /// A new file is made private (0600) before SQLite opens it: it names the user's hosts. A
    /// symbolic link (to a file not made yet) is followed, so its target is the file made
    /// private; SQLite gives the `-wal` and `-shm` files the database file's mode.
    private static func createFile(_ path: String) throws {
        let target = try FileSystemCalls.resolveSymlinks(path)
        let directory = (target as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        }
        let fd = Glibc.open(target, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if fd >= 0 { Glibc.close(fd) }
    }

    /// Runs the migrations; another process migrating the same new file at once makes the
    /// loser's attempt fail, and the next attempt finds the work done.
    private static func migrate(_ pool: DatabasePool, path: String) throws {
        let migrator = HistorySchema.migrator
        var attempt = 0
        while true {
            do {
                if try pool.read(migrator.hasBeenSuperseded) { throw HistoryError.newerSchema(path: path) }
                try migrator.migrate(pool)
                return
            } catch let error as HistoryError {
                throw error
            } catch {
                attempt += 1
                if attempt >= 5 { throw error }
                usleep(20_000 * UInt32(attempt))
            }
        }
    }

    private static func translate(_ error: Error, path: String, busySeconds: Double) -> Error {
        if let error = error as? HistoryError { return error }
        guard let database = error as? DatabaseError else {
            // GRDB's decoding errors quote the row's values: text from the file, cleaned.
            return HistoryError.unusable(path: path, detail: Sanitizer.clean("\(error)", limit: 300))
        }
        switch database.resultCode {
        case .SQLITE_NOTADB: return HistoryError.notADatabase(path: path, detail: "file is not a database")
        case .SQLITE_CORRUPT: return HistoryError.notADatabase(path: path, detail: "the database is damaged")
        case .SQLITE_BUSY, .SQLITE_LOCKED: return HistoryError.busy(path: path, seconds: busySeconds)
        default: return HistoryError.unusable(path: path, detail: Sanitizer.clean(database.message ?? "\(database.resultCode)", limit: 300))
        }
    }
}

/// One recorded probe, as the `history` command reads it back; its text cleaned, its time checked.
public struct StoredSighting: Hashable, Sendable {
    public var id: Int64
    public var host: CleanText
    public var endpoint: CleanText
    public var seenAt: UInt64
    public var source: CleanText
    public var complete: Bool
    public var keys: [KeyIdentity]
}

/// The four statements that record one sighting, looked up once per transaction rather than
/// once per row (a scan records hundreds of sightings and keys; the look-up hashes each SQL text).
private struct SightingStatements {
    let db: Database
    let sighting: Statement
    let latest: Statement
    let sightingKey: Statement
    let hostKey: Statement

    init(_ db: Database) throws {
        self.db = db
        sighting = try db.cachedStatement(sql: "INSERT INTO sighting (host, lookup, endpoint, seen_at, source, complete) VALUES (?, ?, ?, ?, ?, ?)")
        latest = try db.cachedStatement(sql: """
            INSERT INTO host_latest (lookup, sighting_id, complete) VALUES (?, ?, ?)
            ON CONFLICT (lookup) DO UPDATE SET sighting_id = excluded.sighting_id, complete = excluded.complete
            """)
        sightingKey = try db.cachedStatement(sql: "INSERT OR IGNORE INTO sighting_key (sighting_id, key_type, fingerprint) VALUES (?, ?, ?)")
        hostKey = try db.cachedStatement(sql: """
            INSERT INTO host_key (lookup, key_type, fingerprint, first_seen, last_seen, last_sighting, sightings)
            VALUES (?, ?, ?, ?, ?, ?, 1)
            ON CONFLICT (lookup, key_type, fingerprint) DO UPDATE SET
                first_seen = min(first_seen, excluded.first_seen), last_seen = max(last_seen, excluded.last_seen),
                last_sighting = excluded.last_sighting, sightings = sightings + 1
            """)
    }

    /// Records one sighting and its keys.
    func insert(_ seen: HistorySighting) throws {
        try sighting.execute(arguments: [seen.host, seen.lookup, seen.endpoint, Int64(seen.seenAt), seen.source.rawValue, seen.complete])
        let id = db.lastInsertedRowID
        try latest.execute(arguments: [seen.lookup, id, seen.complete])
        for key in seen.keys {
            try sightingKey.execute(arguments: [id, key.type, key.fingerprint])
            try hostKey.execute(arguments: [seen.lookup, key.type, key.fingerprint, Int64(seen.seenAt), Int64(seen.seenAt), id])
        }
    }
}
