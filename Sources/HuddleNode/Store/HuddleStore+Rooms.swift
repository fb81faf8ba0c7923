import GRDB

extension HuddleStore {
    /// The rooms the node is in, in the order it joined them. A room left and joined again goes
    /// to the end.
    public func joinedRooms() throws -> [String] {
        try read { db in
            try String.fetchAll(db, sql: "SELECT name FROM joined_room ORDER BY position")
        }
    }

    /// Records that the node joined (`true`) or left (`false`) `room`. Joining a room it is in,
    /// or leaving one it is not in, changes nothing.
    public func setJoined(_ room: String, _ joined: Bool) throws {
        try write { db in try Self.setJoined(room, joined, in: db) }
    }

    static func setJoined(_ room: String, _ joined: Bool, in db: Database) throws {
        if joined {
            try db.execute(sql: "INSERT OR IGNORE INTO joined_room (name) VALUES (?)", arguments: [room])
        } else {
            try db.execute(sql: "DELETE FROM joined_room WHERE name = ?", arguments: [room])
        }
    }

    /// The name of private room `id` (a ``RoomKey/id``) this node joined, so that after a restart
    /// it can say which private room waits for its passphrase. Only the name: the store never
    /// holds a room's key or passphrase. Written with the machine's writes
    /// (``StoreWrite/privateRoomName(id:name:)``).
    public func privateRoomName(_ id: String) throws -> String? {
        try metaValue(Self.privateRoomNameKey + id)
    }

    /// The console's current room (where a typed line goes), or `nil`. Any room name may be
    /// recorded here; the node decides what it means if the room is not joined.
    public var currentRoom: String? {
        get throws { try metaValue(Self.currentRoomKey) }
    }

    /// Remembers the console's current room (`nil` forgets it).
    public func setCurrentRoom(_ room: String?) throws {
        try setMetaValue(Self.currentRoomKey, room)
    }

    /// Where the meta table keeps the current room, and each private room's name.
    static let currentRoomKey = "current_room"
    static let privateRoomNameKey = "private_room_name:"
}
