import Foundation
import GRDB
public import HuddleCore

extension HuddleStore {
    /// The first node seen under each nick, trust on first use (as SSH remembers host keys): a
    /// later node with a known nick is told apart from it and warned about.
    public func knownNicks() throws -> [String: NodeID] {
        try read { db in
            var known: [String: NodeID] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT nick, node_id FROM known_nick") {
                let nick: String = row[0]
                guard let data = Data.fromDatabaseValue(row[1]), let id = NodeID(bytes: data) else { continue }
                known[nick] = id
            }
            return known
        }
    }

    /// Most nicks remembered: a node that joins under ever new nicks cannot grow the store
    /// without bound (past this, new nicks are simply not remembered).
    public static let maximumKnownNicks = 10_000

    /// Remembers `id` as the node called `nick` unless another node was seen under it first.
    /// Returns the id remembered for `nick` (the first one).
    @discardableResult
    public func rememberNick(_ nick: String, id: NodeID, at: WallTime) throws -> NodeID {
        try write { db in try Self.rememberNick(nick, id: id, at: at, in: db) }
    }

    @discardableResult
    static func rememberNick(_ nick: String, id: NodeID, at: WallTime, in db: Database) throws -> NodeID {
        try db.execute(
            sql: """
                INSERT OR IGNORE INTO known_nick (nick, node_id, first_seen)
                SELECT ?, ?, ? WHERE (SELECT COUNT(*) FROM known_nick) < ?
                """,
            arguments: [nick, Data(id.bytes), at.millisecondsSinceEpoch, Self.maximumKnownNicks])
        let stored = try Data.fetchOne(db, sql: "SELECT node_id FROM known_nick WHERE nick = ?", arguments: [nick])
        return stored.flatMap { NodeID(bytes: $0) } ?? id
    }
}
