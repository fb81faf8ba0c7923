/// A message between two nodes: one UDP datagram, or the payload of one TCP frame.
///
/// Every message is an envelope (magic "HD", protocol version ``WireCodec/version``, kind)
/// followed by the kind's payload. All integers are big-endian; the encoding is canonical, so
/// `WireMessage(decoding: m.encoded()).encoded() == m.encoded()`.
///
///     0      1      2         3      4
///     +------+------+---------+------+==================================+
///     | 0x48 | 0x44 | version | kind | payload                          |
///     | 'H'  | 'D'  |  0x05   |  u8  |                                  |
///     +------+------+---------+------+==================================+
///
///     kind 1 events        count:u16 event*
///     kind 2 digest        from:32 room:str vector:vv fingerprint:u64 per vector entry
///     kind 3 syncRequest   from:32 room:str have:vv limit:u16
///     kind 4 syncResponse  room:str count:u16 event* more:bool
///     kind 5 probe         from:32 nick:str incarnation:u64 sequence:u64 sentAt:i64 port:u16
///                          count:u16 room:str*  count:u16 peer*
///     kind 6 ack           from:32 nick:str incarnation:u64 sequence:u64 echoedSentAt:i64
///                          count:u16 room:str*  count:u16 peer*
///     kind 7 probeRequest  from:32 target:32 sentAt:i64 signature:64
///     kind 8 nack          from:32 target:32 sentAt:i64 signature:64
///     kind 9 leaving       from:32 incarnation:u64 signature:64
///     kind 12 pieceRequest root:32 index:u32                    (TCP only, see PieceRequest)
///     kind 13 piece        root:32 index:u32 length:u32 bytes
///
///     str   = length:u16 utf8[length]          UTF-8, no C0 controls or DEL, per-field limit
///     vv    = count:u16 (origin:32 seq:u64)*   origins strictly ascending, every seq >= 1
///     event = origin:32 seq:u64 room:str createdAt:i64 context:vv body signature:64
///     body  = 1 nick:str | 2 | 3 text:str | 4 label:str | 5 label:str | 6 milliseconds:i64
///             (join)      (leave) (chat)  (calibrationEvent) (mark)   (delayNudge)
///     peer  = id:32 nick:str host:str port:u16 state:u8 incarnation:u64
///     bool  = u8, 0 or 1
///
/// Over TCP each message is preceded by its length (see ``WireFrame``). Limits are in
/// ``WireLimits``; the full layout is in docs/PROTOCOL.md.
///
/// ```swift
/// let bytes = WireMessage.digest(RoomDigest(from: me, room: "superbowl", vector: log.vector)).encoded()
/// let message = try WireMessage(decoding: bytes)
/// ```
public enum WireMessage: Hashable, Sendable {
    /// Push: one event or a batch (UDP), the newest events to a room's peers.
    case events([Event])
    /// Anti-entropy: "here is my version vector for room R".
    case digest(RoomDigest)
    /// "Send me what I miss": room, requester's version vector, max events wanted.
    case syncRequest(SyncRequest)
    /// A batch of events for the room, and whether there is more to pull.
    case syncResponse(SyncResponse)
    /// Membership heartbeat/probe.
    case probe(Probe)
    /// Reply to a probe.
    case ack(Ack)
    /// "Probe this node for me" (SWIM's ping-req).
    case probeRequest(ProbeRequest)
    /// "It did not answer me either": a helper's answer to a ``ProbeRequest`` that failed.
    case nack(Nack)
    /// "I am stopping on purpose": a node's goodbye, so its peers say it left instead of
    /// suspecting it.
    case leaving(Leaving)
    /// "Send me this piece of a picture's blob" (TCP only; see ``PieceRequest``).
    case pieceRequest(PieceRequest)
    /// A piece of a picture's blob, or none (TCP only).
    case piece(Piece)

    /// The envelope's kind byte for each message.
    public enum Kind: UInt8, Hashable, Sendable, CaseIterable {
        case events = 1
        case digest = 2
        case syncRequest = 3
        case syncResponse = 4
        case probe = 5
        case ack = 6
        case probeRequest = 7
        case nack = 8
        case leaving = 9
        case pieceRequest = 12
        case piece = 13
    }

    /// This message's kind.
    public var kind: Kind {
        switch self {
        case .events: .events
        case .digest: .digest
        case .syncRequest: .syncRequest
        case .syncResponse: .syncResponse
        case .probe: .probe
        case .ack: .ack
        case .probeRequest: .probeRequest
        case .nack: .nack
        case .leaving: .leaving
        case .pieceRequest: .pieceRequest
        case .piece: .piece
        }
    }
}
