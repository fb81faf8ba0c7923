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

/// A peer's side of a room, written by hand: its events, signed by it, each in the context of
/// what it has written before.
struct Writer {
    var session: RoomSession
    let identity: NodeIdentity

    init(_ identity: NodeIdentity = .generate(), room: String = "superbowl") {
        self.identity = identity
        session = RoomSession(room: room, reader: identity.id)
    }

    mutating func make(_ body: EventBody, at now: WallTime) throws -> Event {
        try session.compose(body, now: now, signer: identity).event
    }

    /// Makes the event and hands it to `reader`'s session at the same instant: what it shows.
    @discardableResult
    mutating func says(_ body: EventBody, at now: WallTime, to reader: inout RoomSession) throws -> [RoomOutput] {
        reader.receive(try make(body, at: now), now: now)
    }
}

extension RoomSession {
    /// alice's room as a late joiner finds it: alice proposes kickoff at `base` + 1 s and marks it
    /// at + 2 s, bob marks it at + 5 s on his clock (3 s behind her); then five messages each,
    /// alice's at + 10…14 s and bob's at + 13.5…17.5 s on his clock (half a second after hers in
    /// game time).
    static func busy(alice: NodeIdentity, bob: NodeIdentity, base: WallTime) throws -> RoomSession {
        var room = RoomSession(room: "superbowl", reader: alice.id)
        _ = try room.compose(.join(nick: "alice"), now: base, signer: alice)
        _ = room.receive(bob.event(1, .join(nick: "bob"), at: base, for: room), now: base)
        _ = try room.compose(.calibrationEvent(label: "kickoff"), now: base + .seconds(1), signer: alice)
        _ = try room.compose(.mark(label: "kickoff"), now: base + .seconds(2), signer: alice)
        _ = room.receive(bob.event(2, .mark(label: "kickoff"), at: base + .seconds(5), for: room), now: base + .seconds(5))
        for i in 0..<5 {
            _ = try room.compose(.chat(text: "alice \(i)"), now: base + .seconds(10) + Int64(i) * .seconds(1), signer: alice)
            let at = base + .milliseconds(13_500) + Int64(i) * .seconds(1)
            _ = room.receive(bob.event(UInt64(3 + i), .chat(text: "bob \(i)"), at: at, for: room), now: at)
        }
        return room
    }
}

extension Membership {
    /// Takes peer `id` as having answered a probe of ours at its address (what its signed ack to
    /// one, from there, does), for a test about something else than trust.
    mutating func proveForTest(_ id: NodeID) {
        peers[id]?.addressProven = true
        peers.entries[id]?.probeSoon = false
    }

    /// ``proveForTest(_:)`` for every peer known.
    mutating func proveAllForTest() {
        for id in peers.keys { proveForTest(id) }
    }
}
