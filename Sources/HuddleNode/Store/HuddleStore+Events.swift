import Foundation
import GRDB
public import HuddleCore

extension HuddleStore {
    /// Stores a batch of events in one transaction and returns how many were new. An event whose
    /// (room, origin, seq) is already stored is skipped, whatever its contents: the first copy
    /// stays. The events may belong to different rooms.
    ///
    /// The store keeps the bytes as given and does not verify them: insert only events whose
    /// signature was checked and that passed the wire limits (every event from
    /// `Event(decoding:)`, and every local event that passed `validate()` before signing), or
    /// ``events(room:)`` will later refuse the row as corrupt.
    ///
    /// Once this returns, the events survive the process being killed; with `durable`, they
    /// survive a power cut too (SQLite's `synchronous = FULL` for this transaction: the log is
    /// synced to disk before it returns). A node stores each event it makes durably before
    /// sending it, so it can never sign a second, different event with the same seq.
    @discardableResult
    public func insert(_ events: some Collection<Event>, durable: Bool = false) throws -> Int {
        guard !events.isEmpty else { return 0 }
        return try transaction(synced: durable) { db in try Self.insert(events, in: db) }
    }

    static func insert(_ events: some Collection<Event>, in db: Database) throws -> Int {
        let statement = try db.cachedStatement(
            sql: """
                INSERT OR IGNORE INTO event (room, origin, seq, created_at, kind, text, bytes)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """)
        var inserted = 0
        for event in events {
            let (kind, text) = Self.summary(of: event.wireBody)
            try statement.execute(arguments: [
                event.room, Data(event.origin.bytes), Int64(bitPattern: event.seq),
                event.createdAt.millisecondsSinceEpoch,
                kind, text, Data(event.encoded()),
            ])
            inserted += db.changesCount
        }
        return inserted
    }

    /// Every stored event of `room`, sorted by origin then seq (so a ``RoomLog`` rebuilt from
    /// them never buffers). Signatures were checked before the events were stored and are not
    /// checked again.
    ///
    /// - Throws: ``StoreError/corruptEvent(path:room:origin:seq:reason:)`` for a row that does not
    ///   decode, or decodes to an event other than the row's: the file was damaged or written by
    ///   something else. Such a row is not skipped, because skipping it would leave a gap that
    ///   anti-entropy could never fill (the damaged row still holds the id).
    public func events(room: String) throws -> [Event] {
        try read { db in try Self.events(room: room, in: db, path: path) }
    }

    /// Number of events stored for `room`.
    public func eventCount(room: String) throws -> Int {
        try read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM event WHERE room = ?", arguments: [room]) ?? 0
        }
    }

    /// Every room with at least one stored event, sorted by name (joined or not).
    public func storedRooms() throws -> [String] {
        try read { db in
            try String.fetchAll(db, sql: "SELECT DISTINCT room FROM event ORDER BY room")
        }
    }

    /// Records that the events were shown to the user at `at` (milliseconds since the epoch, the
    /// node's clock), in one transaction, and returns how many were newly marked. An event
    /// already marked keeps its first time; an id that is not stored is ignored, so store an
    /// event before showing it.
    @discardableResult
    public func markShown(_ ids: some Collection<EventID>, room: String, at: WallTime) throws -> Int {
        guard !ids.isEmpty else { return 0 }
        return try write { db in try Self.markShown(ids, room: room, at: at, in: db) }
    }

    static func markShown(
        _ ids: some Collection<EventID>, room: String, at: WallTime, in db: Database
    ) throws -> Int {
        let statement = try db.cachedStatement(
            sql: """
                UPDATE event SET shown_at = ?
                WHERE room = ? AND origin = ? AND seq = ? AND shown_at IS NULL
                """)
        var marked = 0
        for id in ids {
            try statement.execute(
                arguments: [at.millisecondsSinceEpoch, room, Data(id.origin.bytes), Int64(bitPattern: id.seq)])
            marked += db.changesCount
        }
        return marked
    }

    /// The ids of the events of `room` that were shown: after a restart, the node shows none of
    /// them again.
    public func shownIDs(room: String) throws -> Set<EventID> {
        try read { db in
            var ids = Set<EventID>()
            let rows = try Row.fetchCursor(
                db, sql: "SELECT origin, seq FROM event WHERE room = ? AND shown_at IS NOT NULL",
                arguments: [room])
            while let row = try rows.next() {
                let origin = Data.fromDatabaseValue(row[0]).flatMap { NodeID(bytes: $0) }
                let seq = Int64.fromDatabaseValue(row[1])
                guard let origin, let seq else {
                    throw StoreError.corruptEvent(
                        path: path, room: room, origin: "?", seq: 0, reason: "a shown row has no valid origin or seq")
                }
                ids.insert(EventID(origin: origin, seq: UInt64(bitPattern: seq)))
            }
            return ids
        }
    }

    // MARK: Rows

    private static func events(room: String, in db: Database, path: String) throws -> [Event] {
        var events: [Event] = []
        let rows = try Row.fetchCursor(
            db, sql: "SELECT origin, seq, bytes FROM event WHERE room = ? ORDER BY origin, seq",
            arguments: [room])
        while let row = try rows.next() {
            let originBytes = Data.fromDatabaseValue(row[0]) ?? Data()
            let seq = UInt64(bitPattern: Int64.fromDatabaseValue(row[1]) ?? 0)
            func corrupt(_ reason: String) -> StoreError {
                let origin = NodeID(bytes: originBytes)?.description ?? originBytes.hexString
                return .corruptEvent(path: path, room: room, origin: origin, seq: seq, reason: reason)
            }
            guard let bytes = Data.fromDatabaseValue(row[2]) else { throw corrupt("no bytes") }
            let event: Event
            do {
                event = try Event(decoding: bytes)
            } catch {
                throw corrupt(error.description)
            }
            guard event.room == room, event.origin.bytes.elementsEqual(originBytes), event.seq == seq else {
                throw corrupt("the bytes hold event \(event.id) of room \"\(event.room)\"")
            }
            events.append(event)
        }
        return events
    }

    /// The `kind` and `text` columns: a readable summary of the body for people using `sqlite3`.
    private static func summary(of body: EventBody) -> (kind: String, text: String?) {
        switch body {
        case .join(let nick): ("join", nick)
        case .leave: ("leave", nil)
        case .chat(let text): ("chat", text)
        case .calibrationEvent(let label): ("calibration", label)
        case .mark(let label): ("mark", label)
        case .unmark(let label): ("unmark", label)
        case .delayNudge(let milliseconds): ("delay", milliseconds > 0 ? "+\(milliseconds)" : "\(milliseconds)")
        // A private room's events stay sealed at rest: only the room key reads them.
        case .sealed: ("sealed", nil)
        case .score(let home, let guest): ("score", "\(home)-\(guest)")
        case .teams(let home, let guest): ("teams", "\(home) v \(guest)")
        case .heard(let match): ("heard", "\(match.peer) \(match.lag.microseconds) µs ± \(match.sigma.microseconds)")
        case .picture(let picture): ("picture", "\(picture.rootHex) \(picture.caption)")
        case .voided(let from): ("voided", "from \(from)")
        }
    }
}
