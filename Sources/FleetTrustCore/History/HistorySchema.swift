import GRDB

/// The history database's schema, as migrations from the first version on: a newer fleettrust
/// adds a migration, never edits one, so every older file upgrades in place.
enum HistorySchema {
    /// `PRAGMA application_id` of a fleettrust history ("FTHI"): tells our file from another
    /// program's SQLite database, which is never touched.
    static let applicationID: Int32 = 0x4654_4849

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-sightings") { db in
            try db.execute(sql: "PRAGMA application_id = \(applicationID)")
            // One row per probe that proved keys: the log of what was presented and when. `host_key`
            // and `host_latest` summarise it per host, kept in the same transaction, so judging drift
            // reads a few rows per host however long the log grows.
            try db.execute(sql: """
                CREATE TABLE sighting (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    host TEXT NOT NULL,
                    endpoint TEXT NOT NULL,
                    seen_at INTEGER NOT NULL,
                    source TEXT NOT NULL,
                    complete INTEGER NOT NULL
                );
                CREATE INDEX sighting_by_host ON sighting(host, id);
                CREATE TABLE sighting_key (
                    sighting_id INTEGER NOT NULL REFERENCES sighting(id) ON DELETE CASCADE,
                    key_type TEXT NOT NULL,
                    fingerprint TEXT NOT NULL,
                    PRIMARY KEY (sighting_id, key_type, fingerprint)
                ) WITHOUT ROWID;
                CREATE TABLE host_key (
                    host TEXT NOT NULL,
                    key_type TEXT NOT NULL,
                    fingerprint TEXT NOT NULL,
                    first_seen INTEGER NOT NULL,
                    last_seen INTEGER NOT NULL,
                    last_sighting INTEGER NOT NULL,
                    sightings INTEGER NOT NULL,
                    PRIMARY KEY (host, key_type, fingerprint)
                ) WITHOUT ROWID;
                CREATE TABLE host_latest (
                    host TEXT NOT NULL PRIMARY KEY,
                    sighting_id INTEGER NOT NULL,
                    complete INTEGER NOT NULL
                ) WITHOUT ROWID;
                """)
        }
        return migrator
    }
}
