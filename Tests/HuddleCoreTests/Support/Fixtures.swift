@testable import HuddleCore

extension NodeID {
    /// A made-up id whose bytes are `n` followed by zeros: node 1 < node 2 < … in id order.
    static func fixture(_ n: UInt8) -> NodeID {
        NodeID(bytes: [n] + [UInt8](repeating: 0, count: NodeID.byteCount - 1))!
    }
}

extension Event {
    /// An event with a placeholder signature, for tests of logic that does not verify signatures.
    /// The placeholder depends on every field (as a real signature does), so two different
    /// events never share one and chain fingerprints tell them apart.
    static func fixture(
        _ origin: NodeID, _ seq: UInt64, _ body: EventBody, at createdAt: WallTime = .epoch,
        room: String = "superbowl", context: VersionVector? = nil
    ) -> Event {
        fixture(origin, seq, body, atMilliseconds: createdAt.millisecondsSinceEpoch, room: room, context: context)
    }

    /// The same, made when the origin's clock read `milliseconds` as the wire carries it: any
    /// value, a hostile one too.
    static func fixture(
        _ origin: NodeID, _ seq: UInt64, _ body: EventBody, atMilliseconds milliseconds: Int64,
        room: String = "superbowl", context: VersionVector? = nil
    ) -> Event {
        var ctx = context ?? VersionVector()
        ctx[origin] = seq - 1
        let id = EventID(origin: origin, seq: seq)
        let signed = Event.signedBytes(
            id: id, room: room, createdAtMilliseconds: milliseconds, context: ctx, body: body)
        return Event(
            id: id, room: room, createdAtMilliseconds: milliseconds, context: ctx, body: body,
            signature: placeholder(signed))
    }

    /// 64 bytes of FNV-1a over `bytes`, eight rounds with different seeds: not a signature.
    private static func placeholder(_ bytes: [UInt8]) -> [UInt8] {
        (0..<8).flatMap { round -> [UInt8] in
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(round)
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
            return (0..<8).map { UInt8(truncatingIfNeeded: hash >> (8 * $0)) }
        }
    }
}

extension NodeIdentity {
    /// This node's event `seq` in `session`'s room, signed as a peer would make it right now: its
    /// context is what the session has delivered, with this node's own entry at `seq − 1`.
    func event(_ seq: UInt64, _ body: EventBody, at createdAt: WallTime, for session: RoomSession) -> Event {
        var context = session.log.deliveredVector
        context[id] = seq - 1
        return sign(id: EventID(origin: id, seq: seq), room: session.room, createdAt: createdAt, context: context, body: body)
    }
}
