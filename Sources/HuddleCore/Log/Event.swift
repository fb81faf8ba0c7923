/// One entry of a room's log, as its origin made and signed it.
///
/// An event is immutable once signed: ``signature`` covers every other field (see
/// ``signedBytes``), and the origin's ``NodeID`` is the key that checks it.
public struct Event: Hashable, Sendable {
    /// Origin and sequence number.
    public let id: EventID
    /// The room this event belongs to.
    public let room: String
    /// The origin's clock when it made the event, in milliseconds since the Unix epoch.
    public let createdAt: Int64
    /// The origin's version vector when it made the event: everything it had shown by then.
    /// A node shows the event only after everything in here.
    public let context: VersionVector
    public let body: EventBody
    /// Ed25519 signature by `id.origin` over ``signedBytes``.
    public let signature: [UInt8]

    /// Length of an Ed25519 signature.
    public static let signatureByteCount = 64

    public init(
        id: EventID, room: String, createdAt: Int64, context: VersionVector, body: EventBody,
        signature: [UInt8]
    ) {
        self.id = id
        self.room = room
        self.createdAt = createdAt
        self.context = context
        self.body = body
        self.signature = signature
    }

    public var origin: NodeID { id.origin }
    public var seq: UInt64 { id.seq }
}
