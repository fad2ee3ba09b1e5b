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
        migrator.registerMigration("v2-lookup-key") { db in
            // History is keyed by the name `ssh` looks the host up under, not by the inventory name:
            // `web1` in two inventories at two endpoints is two hosts to `ssh`, and one host under
            // two inventory names is one. Older rows get the lookup name of the endpoint they
            // recorded (a HostKeyAlias was not recorded: such a host starts a new history); the
            // per-host summaries are rebuilt from the log.
            try db.execute(sql: "ALTER TABLE sighting ADD COLUMN lookup TEXT NOT NULL DEFAULT ''")
            for endpoint in try String.fetchAll(db, sql: "SELECT DISTINCT endpoint FROM sighting") {
                try db.execute(sql: "UPDATE sighting SET lookup = ? WHERE endpoint = ?", arguments: [lookupName(ofEndpoint: endpoint), endpoint])
            }
            try db.execute(sql: """
                CREATE INDEX sighting_by_lookup ON sighting(lookup, id);
                CREATE TABLE host_key_v2 (
                    lookup TEXT NOT NULL,
                    key_type TEXT NOT NULL,
                    fingerprint TEXT NOT NULL,
                    first_seen INTEGER NOT NULL,
                    last_seen INTEGER NOT NULL,
                    last_sighting INTEGER NOT NULL,
                    sightings INTEGER NOT NULL,
                    PRIMARY KEY (lookup, key_type, fingerprint)
                ) WITHOUT ROWID;
                INSERT INTO host_key_v2
                    SELECT s.lookup, k.key_type, k.fingerprint, min(s.seen_at), max(s.seen_at), max(s.id), count(*)
                    FROM sighting s JOIN sighting_key k ON k.sighting_id = s.id
                    GROUP BY s.lookup, k.key_type, k.fingerprint;
                DROP TABLE host_key;
                ALTER TABLE host_key_v2 RENAME TO host_key;
                CREATE TABLE host_latest_v2 (
                    lookup TEXT NOT NULL PRIMARY KEY,
                    sighting_id INTEGER NOT NULL,
                    complete INTEGER NOT NULL
                ) WITHOUT ROWID;
                INSERT INTO host_latest_v2
                    SELECT s.lookup, s.id, s.complete FROM sighting s
                    WHERE s.id = (SELECT max(t.id) FROM sighting t WHERE t.lookup = s.lookup);
                DROP TABLE host_latest;
                ALTER TABLE host_latest_v2 RENAME TO host_latest;
                """)
        }
        return migrator
    }

    /// The lookup name of a recorded `address:port` (`[v6]:port`) endpoint.
    static func lookupName(ofEndpoint endpoint: String) -> String {
        guard let colon = endpoint.lastIndex(of: ":"), let port = Int(endpoint[endpoint.index(after: colon)...]) else { return endpoint }
        var address = String(endpoint[..<colon])
        if address.hasPrefix("["), address.hasSuffix("]") { address = String(address.dropFirst().dropLast()) }
        return LookupName(host: address, port: port).hostString
    }
}
