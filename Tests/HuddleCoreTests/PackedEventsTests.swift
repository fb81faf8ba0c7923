import Testing

@testable import HuddleCore

/// A room log holds each origin's events as packed records (``PackedEvents``): every event must
/// read back as the one that went in, field for field, whatever it holds.
@Suite struct PackedEventsTests {
    let alice = WireSamples.alice
    let room = "superbowl"

    /// Alice's events `1...`, one of each body the wire knows, with contexts naming others.
    func events(_ count: Int) -> [Event] {
        (0..<count).map { index in
            let seq = UInt64(index) + 1
            var context = index % 3 == 0 ? WireSamples.vector(entries: index % 7) : [:]
            context[alice] = seq - 1
            let previous = index.isMultiple(of: 2) ? EventDigest.none : EventDigest(of: [UInt8(index & 0xFF)])
            return Event(
                id: EventID(origin: alice, seq: seq), room: room,
                createdAtMilliseconds: index == 5 ? .min : 1_700_000_000_000 + Int64(index), context: context,
                previous: previous, body: WireSamples.bodies[index % WireSamples.bodies.count],
                signature: WireSamples.signature(UInt8(truncatingIfNeeded: index)))
        }
    }

    func packed(_ events: [Event]) -> PackedEvents {
        var packed = PackedEvents(origin: alice, room: room)
        for event in events { packed.append(event) }
        return packed
    }

    @Test func everyKindOfEventReadsBackAsItWentInAcrossChunks() {
        let events = events(1_100)
        let packed = packed(events)
        #expect(packed.count == events.count && packed.keptWholeCount == 0)
        for (index, event) in events.enumerated() {
            let read = packed[index]
            // `==` compares what travels; the fields a reader uses must match too.
            #expect(read == event && read.body == event.body && read.previous == event.previous)
            #expect(read.context == event.context && read.createdAtMilliseconds == event.createdAtMilliseconds)
            #expect(read.encoded() == event.encoded())
        }
    }

    @Test func anOpenedPrivateEventKeepsBothItsOpenedBodyAndItsSealedBytes() throws {
        let key = RoomKey(name: "@bob", master: [UInt8](repeating: 5, count: 32))
        let id = EventID(origin: alice, seq: 1)
        let sealed = Event(
            id: id, room: key.id, createdAtMilliseconds: 7, context: [:],
            body: .sealed(bytes: key.seal(.chat(text: "between us"), id: id)), signature: WireSamples.signature(1))
        let opened = try #require(key.open(sealed))
        var packed = PackedEvents(origin: alice, room: key.id)
        packed.append(opened)
        #expect(packed.keptWholeCount == 0)

        #expect(packed[0].body == .chat(text: "between us"))
        #expect(packed[0].seal == opened.seal && packed[0].wireBody == sealed.body)
        #expect(packed[0].encoded() == sealed.encoded())
    }

    @Test func holesAndEventsThatWouldNotPackReadBackToo() {
        let hole = Event.hole(EventID(origin: alice, seq: 2), room: room)
        // No wire decoder takes these: a signature cut short, a chat longer than a chat may be.
        let shortSignature = Event(
            id: EventID(origin: alice, seq: 3), room: room, createdAtMilliseconds: 0, context: [alice: 2],
            body: .chat(text: "short"), signature: [1, 2, 3])
        let tooLong = Event.fixture(alice, 4, .chat(text: String(repeating: "x", count: WireLimits.maxChatTextBytes + 1)))
        let all = [Event.fixture(alice, 1, .join(nick: "alice")), hole, shortSignature, tooLong]
        let packed = packed(all)

        #expect(Array(packed) == all && packed.keptWholeCount == 2)
        #expect(packed[2].signature == [1, 2, 3] && packed[3].body == tooLong.body)
        #expect(packed.isHole(at: 1) && !packed.isHole(at: 0) && packed[1].isHole)
    }

    @Test func aWritersLinesWhileNobodyElseWritesShareOneContext() {
        let bob = WireSamples.bob
        let lines = (UInt64(1)...1_000).map { seq in
            Event.fixture(alice, seq, .chat(text: "line \(seq)"), room: room, context: [bob: seq < 500 ? 1 : 2])
        }
        let packed = packed(lines)
        #expect(Array(packed) == lines && packed.keptWholeCount == 0)
        // Each line's context on the wire is 2 + 2 × 40 bytes; packed, bob's entry is written out
        // once in 16 lines and alice's own never (a hole's flags byte and a record's make up the rest).
        let wire = lines.reduce(0) { $0 + $1.encodedByteCount }
        let saved = wire - packed.recordBytes
        #expect(saved >= lines.count * (32 + 8 + 2 + 2 * 40) - lines.count / 16 * 42 - lines.count - 2 * 42)
    }

    @Test(arguments: [0, 1, 511, 512, 513, 1_000])
    func cutsBackToAnyLengthAndGrowsAgain(kept: Int) {
        let events = events(1_000)
        var packed = packed(events)
        packed.removeSubrange(kept...)
        #expect(Array(packed) == Array(events.prefix(kept)))
        let next = Event.fixture(alice, UInt64(kept) + 1, .chat(text: "again"))
        packed.append(next)
        #expect(packed.count == kept + 1 && packed.last == next)
    }

    @Test func aCopyKeepsWhatItHeldWhileTheOriginalGrowsOrIsCut() {
        let events = events(600)
        var original = packed(Array(events.prefix(520)))
        let copy = original
        original.removeSubrange(100...)
        for event in events[100..<600] { original.append(event) }
        #expect(Array(copy) == Array(events.prefix(520)))
        #expect(Array(original) == events)
    }
}

@Suite struct DeliveryOrderTests {
    @Test func holdsIDsInOrderAndDropsThoseAskedFor() {
        let (alice, bob) = (WireSamples.alice, WireSamples.bob)
        var order = DeliveryOrder()
        var ids: [EventID] = []
        for seq in UInt64(1)...1_200 {
            let id = EventID(origin: seq.isMultiple(of: 3) ? bob : alice, seq: seq)
            order.append(id)
            ids.append(id)
        }
        #expect(Array(order) == ids)
        order.removeAll { $0.origin == bob && $0.seq >= 600 }
        #expect(Array(order) == ids.filter { $0.origin == alice || $0.seq < 600 })
        #expect(DeliveryOrder(arrayLiteral: ids[0], ids[1]) == [ids[0], ids[1]])
    }
}
