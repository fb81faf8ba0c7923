/// Every room the machine knows, by wire name (a private or direct room's id): its session once
/// loaded, and one entry of everything kept about it beside (its key, what the store held, a
/// direct room's peer, the commit under way). Nothing about a room is kept in a map of its own
/// elsewhere, to keep in step by hand; an entry with nothing left in it is dropped.
///
/// The sessions are apart from the entries, in this one type: an entry is read on every event
/// (the commit under way, a room's name), and copying a session with it would retain every part
/// of the session each time (it made a console's burst 10-30 % slower).
///
/// Read it as a dictionary of loaded sessions: `rooms[room]` (changed in place: a session holds
/// its whole log), `rooms.loaded`, `rooms.sessions`; what is kept beside, as `rooms[entry: room]`.
public struct RoomTable: Sendable {
    /// The loaded rooms' sessions.
    private var loadedSessions: [String: RoomSession] = [:]
    /// What is kept about each room beside its session; no entry is empty.
    private(set) var entries: [String: RoomEntry] = [:]

    /// The room's session, once loaded (``NodeMachine/loadRoom(_:now:)``).
    public internal(set) subscript(room: String) -> RoomSession? {
        get { loadedSessions[room] }
        _modify { yield &loadedSessions[room] }
    }

    /// What is kept about `room`: an empty entry when nothing is; an entry left empty is dropped.
    subscript(entry room: String) -> RoomEntry {
        get { entries[room] ?? RoomEntry() }
        set { entries[room] = newValue.isEmpty ? nil : newValue }
    }

    /// The loaded rooms' wire names, sorted.
    public var loaded: [String] { loadedSessions.keys.sorted() }

    /// The loaded rooms' sessions, in no particular order.
    public var sessions: Dictionary<String, RoomSession>.Values { loadedSessions.values }

    /// The rooms whose entry satisfies `condition`, sorted.
    func rooms(where condition: (RoomEntry) -> Bool) -> [String] {
        entries.compactMap { condition($0.value) ? $0.key : nil }.sorted()
    }
}

/// What the machine keeps about one room beside its session.
public struct RoomEntry: Sendable {
    /// What the store held of it at start, until the room is loaded.
    var stored: StoredRoom?
    /// The key of a private or direct room this node reads (see ``RoomKey``).
    public internal(set) var key: RoomKey?
    /// A private room's name, as the store keeps it (known before this run has its key).
    var privateName: String?
    /// A private room this node is in whose passphrase this run was not given: not read, not
    /// advertised, until ``NodeMachine/join(key:now:)`` opens it again.
    var locked = false
    /// A direct room's peer, on the other side.
    public internal(set) var directPeer: NodeID?
    /// The first seq of this node's own events here whose commit is still under way (see
    /// `NodeMachine+Commits`).
    var uncommittedFrom: UInt64?
    /// This node's latest seq here once it started: what it writes after is what a piped input's
    /// end waits to see delivered (``NodeMachine/writtenSinceStart``).
    var ownSeqAtStart: UInt64?
    /// When someone was lately reported here as holding another passphrase.
    var mismatchesTold: [WallTime] = []
    /// The seqs this node may use here before its disk is synced again.
    var lease = SeqLease()

    var isEmpty: Bool {
        stored == nil && key == nil && privateName == nil && !locked && directPeer == nil && uncommittedFrom == nil
            && ownSeqAtStart == nil && mismatchesTold.isEmpty && lease == SeqLease()
    }
}
