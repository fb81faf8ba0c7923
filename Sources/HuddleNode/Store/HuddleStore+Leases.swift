import Foundation
import GRDB

/// The seqs this node leased in each room (``SeqLease``), and whether the last run may have lost
/// what it committed but had not synced.
///
/// Every commit survives a `kill -9` (SQLite's write-ahead log is in the file before the commit
/// returns); only a synced one survives a power cut. A run writes the machine's boot id when it
/// starts and marks a clean stop when it ends, both synced. The next run finds out from them
/// whether unsynced commits may be gone: the machine booted since, and the run did not stop
/// cleanly.
extension HuddleStore {
    static let leaseKey = "seq_lease:"
    static let bootKey = "run_boot_id"
    static let cleanStopKey = "run_stopped_cleanly"
    static let journalKey = "journal_through"

    /// Every room's leased seqs.
    func leases() throws -> [String: UInt64] {
        try read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT key, value FROM meta WHERE key LIKE ? || '%'", arguments: [Self.leaseKey])
            var leases: [String: UInt64] = [:]
            for row in rows {
                guard let key = String.fromDatabaseValue(row["key"]), let value = String.fromDatabaseValue(row["value"]),
                    let through = UInt64(value)
                else { continue }
                leases[String(key.dropFirst(Self.leaseKey.count))] = through
            }
            return leases
        }
    }

    /// Leases `room`'s seqs up to `through` (never back).
    static func lease(_ room: String, through: UInt64, in db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO meta (key, value) VALUES (?, ?)
                ON CONFLICT (key) DO UPDATE SET value = max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))
                """,
            arguments: [Self.leaseKey + room, String(through)])
    }

    /// Starts a run on the machine booted as `bootID`: whether the last run may have lost what
    /// it committed but had not synced (``NodeRestore/lostUnsynced``). Synced before it returns.
    public func beginRun(bootID: String) throws -> Bool {
        let (boot, clean) = (try metaValue(Self.bootKey), try metaValue(Self.cleanStopKey))
        try transaction(synced: true) { db in
            try Self.setMetaValue(Self.bootKey, bootID, in: db)
            try Self.setMetaValue(Self.cleanStopKey, nil, in: db)
        }
        return boot != nil && boot != bootID && clean == nil
    }

    /// The number of the journal's last entry the store holds (``CommitJournal``); 0 for none.
    func journalThrough() throws -> UInt64 {
        try metaValue(Self.journalKey).flatMap { UInt64($0) } ?? 0
    }

    /// The run stops cleanly: everything it committed is synced with this mark.
    public func endRunCleanly() throws {
        try transaction(synced: true) { db in try Self.setMetaValue(Self.cleanStopKey, "1", in: db) }
    }
}

/// The id of this boot of the machine: a new one after every power cut or reboot.
public enum BootID {
    /// Linux's boot id; `HUDDLE_BOOT_ID` stands in for it in the tests that play a power cut.
    /// Where neither can be read, a fresh one each time: a restart is then taken as a power cut.
    public static func current() -> String {
        if let id = ProcessInfo.processInfo.environment["HUDDLE_BOOT_ID"], !id.isEmpty { return id }
        let read = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)
        return read?.trimmingCharacters(in: .whitespacesAndNewlines) ?? UUID().uuidString
    }
}
