import Foundation
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
            privateRoomNames: names)
    }

    /// What a batch of writes did that the node reports.
    public struct ApplyReport: Sendable {
        /// Events new to the store.
        public var eventsStored = 0
        /// Proofs of equivocation new to the store.
        public var newFaults: [Equivocation] = []
    }

    /// Carries out a machine's writes, in order. Durable ones (this node's own events) are on
    /// disk when this returns; the rest survive the process being killed.
    @discardableResult
    public func apply(_ writes: [StoreWrite]) throws -> ApplyReport {
        var report = ApplyReport()
        for write in writes {
            switch write {
            case .events(let events, let durable):
                report.eventsStored += try insert(events, durable: durable)
            case .shown(let ids, let room, let at):
                try markShown(ids, room: room, at: at)
            case .fault(let proof):
                if try recordFault(proof) { report.newFaults.append(proof) }
            case .delete(let ids, let room):
                try delete(ids, room: room)
            case .joined(let room, let joined):
                try setJoined(room, joined)
            case .currentRoom(let room):
                try setCurrentRoom(room)
            case .privateRoomName(let id, let name):
                try setPrivateRoomName(id, name)
            case .nick(let nick, let id, let at):
                try rememberNick(nick, id: id, at: at)
            }
        }
        return report
    }
}
