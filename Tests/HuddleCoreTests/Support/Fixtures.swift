@testable import HuddleCore

extension NodeID {
    /// A made-up id whose bytes are `n` followed by zeros: node 1 < node 2 < … in id order.
    static func fixture(_ n: UInt8) -> NodeID {
        NodeID(bytes: [n] + [UInt8](repeating: 0, count: NodeID.byteCount - 1))!
    }
}

extension Event {
    /// An event with a placeholder signature, for tests of logic that does not verify signatures.
    static func fixture(
        _ origin: NodeID, _ seq: UInt64, _ body: EventBody, at createdAt: Int64 = 0,
        room: String = "superbowl", context: VersionVector? = nil
    ) -> Event {
        var ctx = context ?? VersionVector()
        ctx[origin] = seq - 1
        return Event(
            id: EventID(origin: origin, seq: seq), room: room, createdAt: createdAt, context: ctx, body: body,
            signature: [UInt8](repeating: 0, count: Event.signatureByteCount))
    }
}
