/// Anti-entropy and repair: "here is my version vector for room R".
///
/// Sent by UDP, periodically and whenever a node sees it misses something (``Replication``). A
/// receiver that holds events the sender misses pushes them; one that misses events the sender
/// holds answers with its own digest, or asks for them with a ``SyncRequest`` (TCP) when they are
/// more than one push carries.
public struct RoomDigest: Hashable, Sendable {
    /// The node whose vector this is.
    public var from: NodeID
    /// The room the vector summarises.
    public var room: String
    /// Everything `from` holds of `room`.
    public var vector: VersionVector
    /// For each entry of `vector`, the chain fingerprint of the origin's events up to it (see
    /// ``RoomLog/fingerprint(of:at:)``): lets two nodes whose vectors agree see that they hold
    /// different events. On the wire, one `u64` per vector entry, in the vector's order; 0 (and
    /// an origin missing here) means "not given".
    public var fingerprints: [NodeID: UInt64]

    public init(from: NodeID, room: String, vector: VersionVector, fingerprints: [NodeID: UInt64] = [:]) {
        self.from = from
        self.room = room
        self.vector = vector
        self.fingerprints = fingerprints.filter { vector[$0.key] > 0 && $0.value != 0 }
    }
}

/// Anti-entropy, step two: "send me what I miss of room R; I hold `have`".
///
/// The responder answers with up to `limit` events the requester misses, in a ``SyncResponse``.
public struct SyncRequest: Hashable, Sendable {
    /// The node asking.
    public var from: NodeID
    /// The room to catch up on.
    public var room: String
    /// Everything the requester already holds of `room`.
    public var have: VersionVector
    /// Most events the requester wants in one response (the responder may send fewer).
    public var limit: UInt16

    public init(from: NodeID, room: String, have: VersionVector, limit: UInt16) {
        self.from = from
        self.room = room
        self.have = have
        self.limit = limit
    }
}

/// Anti-entropy, step three: a batch of events the requester misses.
///
/// `more` says the responder held back further events (limit or frame size reached); the
/// requester merges this batch and sends another ``SyncRequest`` with its new vector.
public struct SyncResponse: Hashable, Sendable {
    /// The room the events belong to.
    public var room: String
    /// At most ``WireLimits/maxEventsPerBatch`` events, each signed by its origin.
    public var events: [Event]
    /// Whether the responder has more events the requester misses.
    public var more: Bool

    public init(room: String, events: [Event], more: Bool) {
        self.room = room
        self.events = events
        self.more = more
    }
}
