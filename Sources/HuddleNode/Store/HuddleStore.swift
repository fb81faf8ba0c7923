import GRDB

/// The node's embedded store: one SQLite file, `<dataDir>/huddle.sqlite`, holding the node's
/// identity key, its nick, the rooms it joined, its current room, and every event of every room
/// with whether (and when) it was shown.
///
/// A node opens it read-write at start and keeps it open; `huddle history` and other tools open
/// it read-only, whether or not a node is running (the file is in WAL mode, so readers never wait
/// for the writer and see only committed transactions).
///
/// ```swift
/// let store = try HuddleStore(directory: dataDir)
/// let me = try store.loadOrCreateIdentity()        // the same NodeID on every start
/// try store.insert(verifiedEvents)                 // one transaction per batch, duplicates ignored
/// var log = RoomLog(room: "superbowl")
/// for event in try store.events(room: "superbowl") { _ = log.insert(event) }
/// let alreadyShown = try store.shownIDs(room: "superbowl")
///
/// let reader = try HuddleStore(directory: dataDir, readOnly: true)
/// let events = try reader.events(room: "superbowl")   // e.g. for `huddle history`
/// ```
///
/// **Durability.** The file runs in WAL mode with `synchronous = NORMAL`: a transaction that has
/// committed survives the process being killed (`kill -9`) at any moment, because the commit is
/// in the WAL file the OS already holds. A power cut or kernel crash may lose the last
/// transactions committed before it (they were not yet fsynced), never corrupt the file. What
/// a node loses that way its peers still hold, and anti-entropy brings it back; that is why
/// per-commit fsyncs (which would cap ingestion at a few hundred transactions a second) are not
/// worth it here. Batch writes: ``insert(_:)`` takes many events in one transaction. This
/// node's own events are the exception: what it may have sent must never be signed again, so the
/// seqs it uses are leased, and each lease synced (`HuddleStore+Leases`, ``SeqLease``).
///
/// **Files and modes.** The data directory is created with mode 0700 if it is missing (an
/// existing directory keeps its mode). The database file is created with mode 0600, and an
/// existing one (and its `-wal`/`-shm` files) is put back to 0600 on every read-write open: it
/// holds the node's private key. SQLite gives its `-wal` and `-shm` files the database's mode.
///
/// **One writer.** A read-write store holds an exclusive lock on `<dataDir>/huddle.lock` (mode
/// 0600) until ``close()``, deinit or the process's death, so a second node on the same data dir
/// fails with ``StoreError/inUse(directory:)`` instead of signing events with the same ids.
///
/// **Read-only.** A read-only store never creates or migrates the directory or the database,
/// never writes to it, and refuses writes with ``StoreError/readOnly(path:)``. As for any reader of
/// a WAL database, SQLite itself may create the empty `-wal` and `-shm` companions next to the
/// database (with the database's mode) if no node has them open.
///
/// All methods are synchronous (they block the calling thread for the duration of the SQL) and
/// thread-safe: reads run on a pool of reader connections, writes are serialised on one writer
/// connection.
public final class HuddleStore: Sendable {
    /// The data directory.
    public let directory: String
    /// The database file, `<directory>/huddle.sqlite`.
    public let path: String
    /// Whether the store was opened read-only.
    public let isReadOnly: Bool

    private let database: any DatabaseWriter
    /// Held by a read-write store: one node per data directory.
    private let lock: StoreLock?

    /// Opens (and, unless `readOnly`, creates and migrates) the store in `directory`.
    ///
    /// - Throws: ``StoreError``: ``StoreError/cannotCreateDirectory(path:reason:)`` or
    ///   ``StoreError/notWritable(path:reason:)`` if the directory or the file cannot be written;
    ///   ``StoreError/inUse(directory:)`` if another read-write store has the directory open;
    ///   ``StoreError/notHuddleDatabase(path:)`` if the file is something else;
    ///   ``StoreError/newerFormat(path:)`` if a newer Huddle wrote it; read-only:
    ///   ``StoreError/noData(directory:)`` if there is no database.
    public init(directory: String, readOnly: Bool = false) throws {
        let path = (directory.hasSuffix("/") ? directory : directory + "/") + StoreSchema.fileName
        self.directory = directory
        self.path = path
        self.isReadOnly = readOnly
        do {
            if readOnly {
                lock = nil
                database = try Self.openReadOnly(path, directory)
            } else {
                try StoreFiles.makeDirectory(directory)
                try StoreFiles.checkWritable(directory)
                lock = try StoreLock(directory: directory)
                database = try Self.openReadWrite(path)
            }
        } catch {
            throw Self.translate(error, path: path)
        }
    }

    /// Closes the database connections and releases the data directory for another store.
    /// Every later call throws. Not needed before exit: a store that is dropped, or whose process
    /// dies, loses no committed transaction.
    public func close() throws {
        do { try database.close() } catch { throw Self.translate(error, path: path) }
        lock?.release()
    }

    // MARK: Opening

    /// The connection settings. Every connection recognises the file before anything else runs
    /// on it (and before DatabasePool switches it to WAL), so another program's database is
    /// refused untouched.
    private static func configuration(
        readOnly: Bool, accept: @escaping @Sendable (StoreSchema.Recognition) throws -> Void
    ) -> Configuration {
        var configuration = Configuration()
        configuration.readonly = readOnly
        configuration.label = "huddle.store"
        // Another process (a tool, or a second node started by mistake) may hold a lock briefly.
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            try accept(StoreSchema.recognize(db))
            // The write-ahead log is cut back to 1 MiB after each checkpoint, not kept at the
            // largest it ever grew to.
            if !readOnly { try db.execute(sql: "PRAGMA journal_size_limit = 1048576") }
            // Each connection's page cache is small: the node reads its events once, when it
            // starts, and serves them from memory after; SQLite's default (2 MiB a connection,
            // one writer and a pool of readers) was a third of a node's memory per event held.
            try db.execute(sql: "PRAGMA cache_size = -256")
        }
        return configuration
    }

    private static func openReadWrite(_ path: String) throws -> any DatabaseWriter {
        try StoreFiles.createPrivateFile(path)
        for file in [path, path + "-wal", path + "-shm"] {
            try StoreFiles.restrictToOwner(file)
        }
        try StoreFiles.checkWritable(path)

        // DatabasePool puts the file in WAL mode with synchronous = NORMAL.
        let pool = try DatabasePool(
            path: path,
            configuration: configuration(readOnly: false) { recognition in
                switch recognition {
                case .empty, .current, .outdated: break
                case .newer: throw StoreError.newerFormat(path: path)
                case .foreign: throw StoreError.notHuddleDatabase(path: path)
                }
            })
        try StoreSchema.migrator.migrate(pool)
        try StoreSchema.freeDeletedPages(pool)
        return pool
    }

    private static func openReadOnly(_ path: String, _ directory: String) throws -> any DatabaseWriter {
        guard StoreFiles.exists(path) else { throw StoreError.noData(directory: directory) }
        // One connection is plenty for a tool: a queue opens no reader pool.
        return try DatabaseQueue(
            path: path,
            configuration: configuration(readOnly: true) { recognition in
                switch recognition {
                case .current: break
                case .empty: throw StoreError.noData(directory: directory)
                case .outdated: throw StoreError.outdatedFormat(path: path)
                case .newer: throw StoreError.newerFormat(path: path)
                case .foreign: throw StoreError.notHuddleDatabase(path: path)
                }
            })
    }

    // MARK: Access

    /// Runs `body` on a reader connection, in a snapshot of the last committed state.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        do { return try database.read(body) } catch { throw Self.translate(error, path: path) }
    }

    /// Runs `body` in one write transaction: all of it commits, or none of it.
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        guard !isReadOnly else { throw StoreError.readOnly(path: path) }
        do { return try database.write(body) } catch { throw Self.translate(error, path: path) }
    }

    /// Runs raw SQL in a write transaction: for tests that damage a file on purpose, and for
    /// maintenance. Not public: the schema is this module's business.
    /// Runs `body` outside any transaction (for pragmas that cannot change inside one).
    func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        guard !isReadOnly else { throw StoreError.readOnly(path: path) }
        do { return try database.writeWithoutTransaction(body) } catch { throw Self.translate(error, path: path) }
    }

    /// Runs `body` in one write transaction. With `synced`, the transaction, and every commit
    /// before it, is on disk when this returns (`synchronous = FULL` for it: it survives a power
    /// cut), not only in the file (which survives the process being killed).
    func transaction<T>(synced: Bool, _ body: (Database) throws -> T) throws -> T {
        try writeWithoutTransaction { db in
            if synced { try db.execute(sql: "PRAGMA synchronous = FULL") }
            defer { if synced { try? db.execute(sql: "PRAGMA synchronous = NORMAL") } }
            var result: T?
            try db.inTransaction {
                result = try body(db)
                return .commit
            }
            return result!
        }
    }

    func execute(sql: String) throws {
        try write { db in try db.execute(sql: sql) }
    }

    /// A ``StoreError`` for whatever SQLite or the file system threw.
    private static func translate(_ error: any Error, path: String) -> any Error {
        guard let error = error as? DatabaseError else { return error }
        switch error.resultCode {
        case .SQLITE_NOTADB:
            return StoreError.notHuddleDatabase(path: path)
        case .SQLITE_READONLY:
            return StoreError.notWritable(path: path, reason: error.message ?? "\(error.resultCode)")
        default:
            let message = error.message ?? "\(error.resultCode)"
            return StoreError.database(path: path, message: "SQLite error \(error.resultCode.rawValue): \(message)")
        }
    }
}
