import Foundation
import GRDB
public import HuddleCore

extension HuddleStore {
    /// Keeps a proof of equivocation and deletes the faulty origin's events from the proof's seq
    /// on, in one transaction: after a restart the room comes back quarantined, with the same
    /// events as every node that knows the proof. A proof at a higher seq than one already kept
    /// for that origin changes nothing. Returns whether the proof was new.
    @discardableResult
    public func recordFault(_ proof: Equivocation) throws -> Bool {
        try write { db in try Self.recordFault(proof, in: db) }
    }

    static func recordFault(_ proof: Equivocation, in db: Database) throws -> Bool {
        let origin = Data(proof.origin.bytes)
        let known = try Int64.fetchOne(
            db, sql: "SELECT seq FROM fault WHERE room = ? AND origin = ?", arguments: [proof.room, origin])
        if let known, UInt64(bitPattern: known) <= proof.seq { return false }
        try db.execute(
            sql: "INSERT OR REPLACE INTO fault (room, origin, seq, first, second) VALUES (?, ?, ?, ?, ?)",
            arguments: [
                proof.room, origin, Int64(bitPattern: proof.seq), Data(proof.first.encoded()),
                Data(proof.second.encoded()),
            ])
        try db.execute(
            sql: "DELETE FROM event WHERE room = ? AND origin = ? AND seq >= ?",
            arguments: [proof.room, origin, Int64(bitPattern: proof.seq)])
        return true
    }

    /// Deletes events of `room` the log gave up on (held past a gap nobody filled): a peer that
    /// sends seqs nobody can complete leaves nothing on disk once they expire.
    public func delete(_ ids: some Collection<EventID>, room: String) throws {
        guard !ids.isEmpty else { return }
        try write { db in try Self.delete(ids, room: room, in: db) }
    }

    static func delete(_ ids: some Collection<EventID>, room: String, in db: Database) throws {
        let statement = try db.cachedStatement(sql: "DELETE FROM event WHERE room = ? AND origin = ? AND seq = ?")
        for id in ids {
            try statement.execute(arguments: [room, Data(id.origin.bytes), Int64(bitPattern: id.seq)])
        }
    }

    /// The proofs of equivocation kept for `room`, by origin.
    ///
    /// - Throws: ``StoreError/corruptEvent(path:room:origin:seq:reason:)`` for a row whose events do
    ///   not decode or do not make a proof.
    public func faults(room: String) throws -> [Equivocation] {
        try read { db in
            var proofs: [Equivocation] = []
            let rows = try Row.fetchCursor(
                db, sql: "SELECT seq, first, second FROM fault WHERE room = ? ORDER BY origin", arguments: [room])
            while let row = try rows.next() {
                let seq = UInt64(bitPattern: Int64.fromDatabaseValue(row[0]) ?? 0)
                func corrupt(_ reason: String) -> StoreError {
                    .corruptEvent(path: path, room: room, origin: "?", seq: seq, reason: "a fault row: \(reason)")
                }
                guard let first = Data.fromDatabaseValue(row[1]), let second = Data.fromDatabaseValue(row[2]) else {
                    throw corrupt("no bytes")
                }
                do {
                    guard let proof = Equivocation(try Event(decoding: first), try Event(decoding: second)),
                        proof.room == room, proof.seq == seq
                    else { throw corrupt("its events are not two versions of one event") }
                    proofs.append(proof)
                } catch let error as WireError {
                    throw corrupt(error.description)
                }
            }
            return proofs
        }
    }
}
