/// One entry of a room's log, as its origin made and signed it.
///
/// An event is immutable once signed: ``signature`` covers every other field (see
/// ``signedBytes``), and the origin's ``NodeID`` is the key that checks it.
public struct Event: Hashable, Sendable {
    /// Origin and sequence number.
    public let id: EventID
    /// The room this event belongs to.
    public let room: String
    /// The origin's wall clock when it made the event, to the millisecond (the wire's unit).
    public var createdAt: WallTime { .milliseconds(sinceEpoch: createdAtMilliseconds) }
    /// ``createdAt`` as the wire carries it and the signature covers it: ms since the epoch, any
    /// `i64`. Kept as it came, so that an event re-encodes to the bytes its origin signed even
    /// when it names a moment past the ±292 000 years a ``WallTime`` holds (``createdAt`` then
    /// saturates).
    let createdAtMilliseconds: Int64
    /// The origin's version vector when it made the event: everything it had shown by then.
    /// A node shows the event only after everything in here.
    public let context: VersionVector
    /// The digest of the origin's event just before this one in the room (seq − 1), or
    /// ``EventDigest/none``: at seq 1, in a void (its predecessor is lost), or in an event made
    /// before links existed. The signature covers it, so one checked signature vouches for the
    /// whole run of events below it (``LinkedCheck``).
    public let previous: EventDigest
    /// What it says. An event of a private room arrives as ``EventBody/sealed(bytes:)`` and says
    /// more once opened with the room's key (``RoomKey/open(_:)``).
    public let body: EventBody
    /// For an opened event of a private room: its body as sealed, which is what travels, what is
    /// stored and what the signature covers (see ``wireBody``). `nil` for every other event.
    public let seal: [UInt8]?
    /// Ed25519 signature by `id.origin` over ``signedBytes``.
    public let signature: [UInt8]

    /// Length of an Ed25519 signature.
    public static let signatureByteCount = 64

    /// An event made at `createdAt`, which it keeps to the millisecond, rounded down (as the
    /// wire carries it).
    public init(
        id: EventID, room: String, createdAt: WallTime, context: VersionVector, previous: EventDigest = .none,
        body: EventBody, seal: [UInt8]? = nil, signature: [UInt8]
    ) {
        self.init(
            id: id, room: room, createdAtMilliseconds: createdAt.millisecondsSinceEpoch, context: context,
            previous: previous, body: body, seal: seal, signature: signature)
    }

    /// An event as the wire carries it: its time in ms since the epoch, whatever the value.
    init(
        id: EventID, room: String, createdAtMilliseconds: Int64, context: VersionVector,
        previous: EventDigest = .none, body: EventBody, seal: [UInt8]? = nil, signature: [UInt8]
    ) {
        self.id = id
        self.room = room
        self.createdAtMilliseconds = createdAtMilliseconds
        self.context = context
        self.previous = previous
        self.body = body
        self.seal = seal
        self.signature = signature
    }

    public var origin: NodeID { id.origin }
    public var seq: UInt64 { id.seq }

    /// The body as it travels and is signed: the sealed bytes of an opened private event, else
    /// ``body``.
    public var wireBody: EventBody { seal.map { .sealed(bytes: $0) } ?? body }

    /// Two events are equal when they travel as the same bytes: an opened private event equals
    /// the sealed one it was opened from (opening is a function of the sealed bytes).
    public static func == (lhs: Event, rhs: Event) -> Bool {
        lhs.id == rhs.id && lhs.signature == rhs.signature && lhs.createdAtMilliseconds == rhs.createdAtMilliseconds
            && lhs.room == rhs.room && lhs.previous == rhs.previous
            && lhs.context == rhs.context && lhs.wireBody == rhs.wireBody
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(signature)
        hasher.combine(createdAtMilliseconds)
        hasher.combine(wireBody)
    }
}
