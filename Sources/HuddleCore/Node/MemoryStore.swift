/// A store in memory that keeps what ``StoreWrite`` says, as the node's SQLite store does, so a
/// machine can be restarted from it: the simulator's and the tests' disk.
public struct MemoryStore: Sendable {
    public var events: [String: [EventID: Event]] = [:]
    public var shown: [String: Set<EventID>] = [:]
    public var faults: [String: [Equivocation]] = [:]
    public var joined: [String] = []
    public var currentRoom: String?
    public var nicks: [String: NodeID] = [:]
    public var privateNames: [String: String] = [:]
    /// Devices paired with the page, by id.
    public var webDevices: [String: WebDevice] = [:]
    /// How many writes of this node's own events there were.
    public var ownWrites = 0
    /// The seqs this node leased, per room (``SeqLease``).
    public var leases: [String: UInt64] = [:]

    public init() {}

    public mutating func apply(_ write: StoreWrite) {
        switch write {
        case .events(let list, let own):
            if own { ownWrites += 1 }
            for event in list where events[event.room]?[event.id] == nil { events[event.room, default: [:]][event.id] = event }
        case .lease(let room, let through):
            leases[room] = max(leases[room] ?? 0, through)
        case .shown(let ids, let room, _):
            shown[room, default: []].formUnion(ids)
        case .fault(let proof):
            faults[proof.room, default: []].append(proof)
        case .delete(let ids, let room):
            for id in ids { events[room]?[id] = nil }
        case .joined(let room, let isJoined):
            if isJoined, !joined.contains(room) { joined.append(room) }
            if !isJoined { joined.removeAll { $0 == room } }
        case .currentRoom(let room):
            currentRoom = room
        case .privateRoomName(let id, let name):
            privateNames[id] = name
        case .nick(let nick, let id, _):
            if nicks[nick] == nil { nicks[nick] = id }
        case .webDevice(let device):
            webDevices[device.id] = device
        case .webDeviceRevoked(let id):
            webDevices[id] = nil
        }
    }

    public var restore: NodeRestore {
        var rooms: [String: StoredRoom] = [:]
        for (room, held) in events {
            let sorted = held.values.sorted { ($0.origin, $0.seq) < ($1.origin, $1.seq) }
            rooms[room] = StoredRoom(events: sorted, faults: faults[room] ?? [], shown: shown[room] ?? [])
        }
        return NodeRestore(
            rooms: rooms, joined: joined, currentRoom: currentRoom, knownNicks: nicks, privateRoomNames: privateNames,
            leases: leases)
    }
}
