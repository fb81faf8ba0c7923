import Foundation
import GRDB
public import HuddleCore

/// The store as a node's machine sees it: what it held at start (``restore()``), and the writes
/// the machine asks for (``apply(_:)``).
extension HuddleStore {
    /// Everything a ``NodeMachine`` starts from: every stored room's events, faults and shown
    /// messages, the rooms joined, the current room, the nicks seen and private rooms' names.
    public func restore() throws -> NodeRestore {
        let joined = try joinedRooms()
        var rooms: [String: StoredRoom] = [:]
        for room in Set(try storedRooms()).union(joined) {
            rooms[room] = StoredRoom(events: try events(room: room), faults: try faults(room: room), shown: try shownIDs(room: room))
        }
        var names: [String: String] = [:]
        for room in joined where RoomKey.isPrivate(room) { names[room] = try privateRoomName(room) }
        return NodeRestore(
            rooms: rooms, joined: joined, currentRoom: try currentRoom, knownNicks: try knownNicks(),
            privateRoomNames: names, leases: try leases())
    }

    /// What a batch of writes did that the node reports.
    public struct ApplyReport: Sendable {
        /// Events new to the store.
        public var eventsStored = 0
        /// Proofs of equivocation new to the store.
        public var newFaults: [Equivocation] = []
    }

    /// Carries out a machine's writes, in order, in one transaction: all of them or none. Once
    /// it returns the transaction survives the process being killed; with a lease among the
    /// writes (``SeqLease``) it is synced too, and survives a power cut (`synchronous = FULL`).
    ///
    /// `journalThrough`: the writes hold the journal's entries up to that number
    /// (``CommitJournal``), noted in the same transaction (``journalThrough()``).
    @discardableResult
    public func apply(_ writes: [StoreWrite], journalThrough: UInt64? = nil) throws -> ApplyReport {
        guard !writes.isEmpty else { return ApplyReport() }
        let synced = writes.contains { if case .lease = $0 { true } else { false } }
        let report = try transaction(synced: synced) { db in
            if let journalThrough { try Self.setMetaValue(Self.journalKey, String(journalThrough), in: db) }
            return try Self.apply(writes, in: db)
        }
        // What a room dropped for good (strangers' events it gave up on) goes back to the file
        // system, not only to SQLite's free list: a store that filled with them once stayed
        // 17 MB after a restart.
        if writes.contains(where: { if case .delete = $0 { true } else { false } }) {
            try writeWithoutTransaction { db in try db.execute(sql: "PRAGMA incremental_vacuum") }
        }
        return report
    }

    private static func apply(_ writes: [StoreWrite], in db: Database) throws -> ApplyReport {
        var report = ApplyReport()
        for write in writes {
            switch write {
            case .events(let events, _):
                report.eventsStored += try insert(events, in: db)
            case .lease(let room, let through):
                try lease(room, through: through, in: db)
            case .shown(let ids, let room, let at):
                _ = try markShown(ids, room: room, at: at, in: db)
            case .fault(let proof):
                if try recordFault(proof, in: db) { report.newFaults.append(proof) }
            case .delete(let ids, let room):
                try delete(ids, room: room, in: db)
            case .joined(let room, let joined):
                try setJoined(room, joined, in: db)
            case .currentRoom(let room):
                try setMetaValue(Self.currentRoomKey, room, in: db)
            case .privateRoomName(let id, let name):
                try setMetaValue(Self.privateRoomNameKey + id, name, in: db)
            case .nick(let nick, let id, let at):
                try rememberNick(nick, id: id, at: at, in: db)
            case .webDevice(let device):
                try keepWebDevice(device, in: db)
            case .webDeviceRevoked(let id):
                try db.execute(sql: "DELETE FROM web_device WHERE id = ?", arguments: [id])
            }
        }
        return report
    }
}
