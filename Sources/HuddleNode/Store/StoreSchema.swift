import GRDB

/// The store's tables, and the migrations that create them.
///
/// ```sql
/// identity     (id = 1, private_key BLOB, node_id TEXT)        -- one row: the node's key
/// meta         (key TEXT PRIMARY KEY, value)                   -- 'nick', 'current_room'
/// joined_room  (position INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE)
/// event        (room, origin, seq, created_at, kind, text, bytes, shown_at)
///              PRIMARY KEY (room, origin, seq) WITHOUT ROWID
/// fault        (room, origin, seq, first BLOB, second BLOB)   -- v2: proofs of equivocation
///              PRIMARY KEY (room, origin) WITHOUT ROWID
/// known_nick   (nick TEXT PRIMARY KEY, node_id BLOB, first_seen) -- v3: trust on first use
/// web_device   (id TEXT PRIMARY KEY, name TEXT UNIQUE, key BLOB, paired_at) -- v4: the page's
///              paired phones (docs/WEB.md), each with the key its sessions are sealed with
/// ```
///
/// `event.bytes` is the event's canonical signed encoding (`Event.encoded()`): the only column
/// the store reads events back from (v5 gave the events stored before it their link field, all
/// zeros: "no link", under which their signatures still check). `created_at`, `kind` and `text`
/// repeat parts of it for people poking at the file with `sqlite3`. `seq` holds the `UInt64`
/// sequence number's bit pattern (a signed 64-bit integer), so no value traps; real sequence
/// numbers are far below 2⁶³.
///
/// The file is marked with ``applicationID`` (`PRAGMA application_id`) so another program's
/// SQLite file is recognised as "not a Huddle database" rather than migrated.
enum StoreSchema {
    /// "HUDL": `PRAGMA application_id` of every Huddle store.
    static let applicationID: Int32 = 0x4855_444C

    /// The file name in the data dir.
    static let fileName = "huddle.sqlite"

    /// Makes the file give deleted pages back (`auto_vacuum = INCREMENTAL`, then
    /// `PRAGMA incremental_vacuum` after deletes, in ``HuddleStore/apply(_:)``). A store made
    /// before has it set once, with a `VACUUM` that rewrites it (a fresh one is nearly empty).
    static func freeDeletedPages(_ writer: some DatabaseWriter) throws {
        try writer.writeWithoutTransaction { db in
            guard try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") != 2 else { return }
            try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
            try db.execute(sql: "VACUUM")
        }
    }

    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    PRAGMA application_id = \(applicationID);
                    CREATE TABLE identity (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        private_key BLOB NOT NULL,
                        node_id TEXT NOT NULL
                    );
                    CREATE TABLE meta (
                        key TEXT PRIMARY KEY NOT NULL,
                        value
                    );
                    CREATE TABLE joined_room (
                        position INTEGER PRIMARY KEY AUTOINCREMENT,
                        name TEXT NOT NULL UNIQUE
                    );
                    CREATE TABLE event (
                        room TEXT NOT NULL,
                        origin BLOB NOT NULL,
                        seq INTEGER NOT NULL,
                        created_at INTEGER NOT NULL,
                        kind TEXT NOT NULL,
                        text TEXT,
                        bytes BLOB NOT NULL,
                        shown_at INTEGER,
                        PRIMARY KEY (room, origin, seq)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v2: faults") { db in
            try db.execute(
                sql: """
                    CREATE TABLE fault (
                        room TEXT NOT NULL,
                        origin BLOB NOT NULL,
                        seq INTEGER NOT NULL,
                        first BLOB NOT NULL,
                        second BLOB NOT NULL,
                        PRIMARY KEY (room, origin)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v3: known nicks") { db in
            try db.execute(
                sql: """
                    CREATE TABLE known_nick (
                        nick TEXT PRIMARY KEY NOT NULL,
                        node_id BLOB NOT NULL,
                        first_seen INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v4: web devices") { db in
            try db.execute(
                sql: """
                    CREATE TABLE web_device (
                        id TEXT PRIMARY KEY NOT NULL,
                        name TEXT NOT NULL UNIQUE,
                        key BLOB NOT NULL,
                        paired_at INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v5: event links") { db in
            // Wire version 6 put a 32-byte link (`previous`) after each event's origin and seq. An
            // event made before has none: zeros, whose signed form is the one it was signed in.
            try db.execute(
                sql: """
                    UPDATE event SET bytes = \(withoutLink("bytes"));
                    UPDATE fault SET first = \(withoutLink("first")), second = \(withoutLink("second"));
                    """)
        }
        return migrator
    }()

    /// SQL for an event's encoding of wire version 5 in `column`, as version 6 encodes it with no
    /// link: 32 zero bytes after its origin (32) and seq (8).
    private static func withoutLink(_ column: String) -> String {
        "CAST(substr(\(column), 1, 40) || zeroblob(32) || substr(\(column), 41) AS BLOB)"
    }

    /// How a file with this application id and these tables relates to Huddle's format.
    enum Recognition: Equatable {
        /// A new, empty SQLite file: ready to be migrated.
        case empty
        /// A Huddle store with every known migration applied.
        case current
        /// A Huddle store missing some migrations.
        case outdated
        /// A Huddle store with migrations this version does not know.
        case newer
        /// Someone else's database.
        case foreign
    }

    /// Recognises the file open on `db` without changing it.
    static func recognize(_ db: Database) throws -> Recognition {
        let applicationID = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
        if applicationID == 0 {
            let tables = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master") ?? 0
            return tables == 0 ? .empty : .foreign
        }
        guard applicationID == Self.applicationID else { return .foreign }
        if try migrator.hasBeenSuperseded(db) { return .newer }
        return try migrator.hasCompletedMigrations(db) ? .current : .outdated
    }
}
