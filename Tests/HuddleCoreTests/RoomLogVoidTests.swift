import Testing

@testable import HuddleCore

/// A node that lost power lost the last events it had made but not synced; it starts past every
/// seq it may have used, and its first event voids the stretch (``EventBody/voided(from:)``).
@Suite(.offThePool) struct RoomLogVoidTests {
    let alice = NodeID.fixture(1)
    let bob = NodeID.fixture(2)

    /// Alice's events 1...n.
    func lines(_ seqs: ClosedRange<UInt64>) -> [Event] {
        seqs.map { Event.fixture(alice, $0, .chat(text: "line \($0)")) }
    }

    func log(holding events: [Event]) -> RoomLog {
        var log = RoomLog(room: "superbowl")
        for event in events { _ = log.insert(event) }
        return log
    }

    @Test func aVoidFillsTheSeqsALogLacksWithHolesAndShowsNothingOfThem() {
        // Alice made 1...5, lost power with 3...5 unsynced, and starts at 9 (her lease ran to 8).
        var log = log(holding: lines(1...2))
        let void = Event.fixture(alice, 9, .voided(from: 3))
        let next = Event.fixture(alice, 10, .chat(text: "back"))

        #expect(log.insert(void) == .accepted(delivered: [void]))
        #expect(log.vector[alice] == 9)
        #expect(log.insert(next) == .accepted(delivered: [next]))
        #expect(log.delivered.map(\.seq) == [1, 2, 9, 10])
        #expect(log.waitingCount == 0)
        // A hole is never served: a peer pulling from this log gets the void and what follows.
        #expect(log.missing(for: [alice: 1]).map(\.seq) == [2, 9, 10])
        #expect(log.event(EventID(origin: alice, seq: 4)) == nil)
        #expect(log.isHole(EventID(origin: alice, seq: 4)))
    }

    @Test func anEventOfTheStretchAPeerHeldStaysAndOneThatComesLaterIsADuplicateNotAFault() {
        let made = lines(1...5)
        let void = Event.fixture(alice, 9, .voided(from: 3))
        // Bob got 3 before the power cut; carol did not.
        var bob = log(holding: Array(made[0...2]) + [void])
        var carol = log(holding: Array(made[0...1]) + [void])
        #expect(bob.delivered.map(\.seq) == [1, 2, 3, 9])
        #expect(carol.delivered.map(\.seq) == [1, 2, 9])

        // Bob's 3 reaches carol after the void: not a second version of seq 3.
        #expect(carol.insert(made[2]) == .duplicate)
        #expect(carol.faults.isEmpty)
        // Their chains agree past the void, so anti-entropy does not take them for diverged.
        #expect(bob.fingerprints == carol.fingerprints)
        #expect(carol.divergence(from: bob.vector, fingerprints: bob.fingerprints).isEmpty)
        #expect(bob.insert(Event.fixture(alice, 4, .chat(text: "other"))) == .duplicate)
    }

    @Test func aVoidThatArrivesFirstWaitsForTheSyncedEventsBeforeIt() {
        // Dave holds nothing of alice's yet: the void must not void 1 and 2, which she still has.
        var dave = RoomLog(room: "superbowl")
        let void = Event.fixture(alice, 9, .voided(from: 3))
        let made = lines(1...2)
        #expect(dave.insert(void) == .accepted(delivered: []))
        #expect(dave.vector[alice] == 0)
        #expect(dave.insert(made[0]) == .accepted(delivered: [made[0]]))
        #expect(dave.insert(made[1]) == .accepted(delivered: [made[1], void]))
        #expect(dave.vector[alice] == 9)
    }

    @Test func anEventPastTheGapWhoseSeqTheVoidCoversIsKeptWhereNothingWasLost() {
        // Erin got 4 (pushed) but lost 3 on the way; the void keeps her 4 and holes only 3 and 5...8.
        let made = lines(1...5)
        var erin = log(holding: Array(made[0...1]) + [made[3]])
        let void = Event.fixture(alice, 9, .voided(from: 3))
        #expect(erin.insert(void) == .accepted(delivered: [made[3], void]))
        #expect(erin.isHole(EventID(origin: alice, seq: 3)))
        #expect(!erin.isHole(EventID(origin: alice, seq: 4)))
    }

    @Test func theOriginStartsPastItsLeaseAndItsOwnLogAgreesWithItsPeers() {
        var own = log(holding: lines(1...2))
        let header = own.nextEventHeader(origin: alice, after: 8)
        #expect(header.id.seq == 9)
        #expect(header.context[alice] == 8)
        let void = Event.fixture(alice, 9, .voided(from: 3))
        #expect(own.insert(void) == .accepted(delivered: [void]))
        #expect(own.nextEventHeader(origin: alice).id.seq == 10)
        // With no lease past the prefix the header is as before.
        #expect(log(holding: lines(1...2)).nextEventHeader(origin: alice, after: 1).id.seq == 3)
    }

    @Test func aVoidOfSeqsNotBeforeItOrOfTooManyIsRefused() {
        var log = log(holding: lines(1...2))
        #expect(log.insert(Event.fixture(alice, 9, .voided(from: 10))) == .rejected(.invalidVoid))
        #expect(log.insert(Event.fixture(alice, 9, .voided(from: 0))) == .rejected(.invalidVoid))
        // More than one lease's worth: one signed datagram must not make a log hold thousands of holes.
        #expect(log.insert(Event.fixture(alice, SeqLease.block + 4, .voided(from: 3))) == .rejected(.invalidVoid))
        #expect(log.vector[alice] == 2)
        var lease = log
        let whole = Event.fixture(alice, SeqLease.block + 3, .voided(from: 3))
        #expect(lease.insert(whole) == .accepted(delivered: [whole]))
        // A void of nothing (from its own seq) is an ordinary event.
        #expect(log.insert(Event.fixture(alice, 3, .voided(from: 3))) == .accepted(delivered: [Event.fixture(alice, 3, .voided(from: 3))]))
    }

    @Test func aVoidCannotSeatAStrangerWithoutItsJoin() {
        // Mallory's fresh key sends a void of her own join: refused, so it cannot take one of the
        // room's origin slots past the seat checks a join meets.
        let mallory = NodeID.fixture(9)
        var log = RoomLog(room: "superbowl")
        #expect(log.insert(Event.fixture(mallory, 5, .voided(from: 1))) == .rejected(.invalidVoid))
        // A void past her join waits, unabsorbed, as any stranger's event past a gap does.
        #expect(log.insert(Event.fixture(mallory, 5, .voided(from: 2))) == .accepted(delivered: []))
        #expect(log.vector[mallory] == 0)
        #expect(log.originCount == 0)
    }

    @Test func aVoidTravelsOnTheWire() throws {
        let void = Event.fixture(alice, 9, .voided(from: 3))
        var writer = ByteWriter()
        writer.write(void)
        var reader = ByteReader(writer.bytes)
        #expect(try reader.readEvent() == void)
    }
}
