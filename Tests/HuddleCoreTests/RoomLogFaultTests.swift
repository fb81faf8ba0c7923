import Testing

@testable import HuddleCore

/// What a room's log does with a peer that misbehaves: equivocation, events that can never be
/// delivered, floods from fresh keys; and how two logs find out they hold different events.
@Suite(.offThePool) struct RoomLogFaultTests {
    let alice = NodeID.fixture(1)
    let bob = NodeID.fixture(2)
    let carol = NodeID.fixture(3)
    let mallory = NodeID.fixture(9)

    // MARK: Equivocation

    /// The wedge from issue 9: mallory signs two events as its #2. Bob holds Y (whose context
    /// names an event of carol's that will never exist); alice holds X and speaks after it, so
    /// her event names mallory#2. Before, bob dropped X as a duplicate and never showed alice again.
    @Test func aSecondVersionOfAnEventQuarantinesItsOriginAndUnblocksTheRoom() {
        let join = Event.fixture(mallory, 1, .join(nick: "mallory"))
        let x = Event.fixture(mallory, 2, .chat(text: "7-0"))
        let y = Event.fixture(mallory, 2, .chat(text: "0-7"), context: [carol: 999])
        let aliceJoin = Event.fixture(alice, 1, .join(nick: "alice"))
        let aliceAfterX = Event.fixture(alice, 2, .chat(text: "nice"), context: [mallory: 2])

        var bob = RoomLog(room: "superbowl")
        for event in [join, y, aliceJoin] { _ = bob.insert(event) }
        #expect(bob.insert(aliceAfterX) == .accepted(delivered: []))  // waits for mallory#2 (Y)

        guard case .equivocation(let proof, let delivered) = bob.insert(x) else {
            Issue.record("a second version of mallory#2 is not taken as proof")
            return
        }
        #expect(proof == Equivocation(x, y))
        #expect(proof.seq == 2)
        #expect(delivered == [aliceAfterX])
        #expect(bob.faults[mallory] == proof)
        #expect(bob.vector == [mallory: 1, alice: 2])
        #expect(!bob.contains(y.id))
        #expect(bob.waitingCount == 0)
        // Mallory can post no more, and its earlier events stay.
        #expect(bob.insert(.fixture(mallory, 3, .chat(text: "more"), context: [mallory: 2])) == .rejected(.quarantined))
        #expect(bob.delivered.map(\.id) == [join.id, aliceJoin.id, aliceAfterX.id])
        // A third version changes nothing more.
        #expect(bob.insert(.fixture(mallory, 2, .chat(text: "third"))) == .rejected(.quarantined))
    }

    @Test func aShownEventOfTheFaultyOriginIsDroppedSoEveryNodeEndsTheSame() {
        let join = Event.fixture(mallory, 1, .join(nick: "mallory"))
        let x = Event.fixture(mallory, 2, .chat(text: "7-0"))
        let x3 = Event.fixture(mallory, 3, .chat(text: "and more"), context: [mallory: 2])
        let y = Event.fixture(mallory, 2, .chat(text: "0-7"))
        var alice = RoomLog(room: "superbowl")
        var bob = RoomLog(room: "superbowl")
        for event in [join, x, x3] { _ = alice.insert(event) }
        for event in [join, y] { _ = bob.insert(event) }
        #expect(alice.deliveryOrder.count == 3)

        // Each hears the other's version (evidence is both events, pushed).
        _ = alice.insert(y)
        _ = bob.insert(x)
        _ = bob.insert(x3)
        #expect(alice.vector == bob.vector)
        #expect(alice.deliveryOrder == [join.id])
        #expect(bob.deliveryOrder == [join.id])
        #expect(alice.faults == bob.faults)
        #expect(alice.fingerprints == bob.fingerprints)
    }

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func anyArrivalOrderOfBothVersionsGivesTheSameLog(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let join = Event.fixture(mallory, 1, .join(nick: "mallory"))
        let x = Event.fixture(mallory, 2, .chat(text: "7-0"))
        let y = Event.fixture(mallory, 2, .chat(text: "0-7"))
        let y3 = Event.fixture(mallory, 3, .chat(text: "then"), context: [mallory: 2])
        let aliceEvents = (1...4).map { Event.fixture(alice, UInt64($0), .chat(text: "a\($0)"), context: [mallory: 2]) }
        let bobEvents = (1...3).map { Event.fixture(bob, UInt64($0), .chat(text: "b\($0)"), context: [alice: 2]) }
        let all = [join, x, y, y3] + aliceEvents + bobEvents

        var reference = RoomLog(room: "superbowl")
        for event in all { _ = reference.insert(event) }
        for _ in 0..<20 {
            var log = RoomLog(room: "superbowl")
            for event in all.shuffled(using: &random) { _ = log.insert(event) }
            #expect(log.vector == reference.vector)
            #expect(log.faults == reference.faults)
            #expect(Set(log.deliveryOrder) == Set(reference.deliveryOrder))
            #expect(log.waitingCount == 0)
        }
        #expect(reference.vector == [mallory: 1, alice: 4, bob: 3])
    }

    @Test func aLowerProofMovesTheQuarantineDownAndAHigherOneChangesNothing() {
        var log = RoomLog(room: "superbowl")
        let events = (1...4).map { Event.fixture(mallory, UInt64($0), .chat(text: "\($0)")) }
        for event in events { _ = log.insert(event) }
        let at3 = Equivocation(events[2], .fixture(mallory, 3, .chat(text: "other 3")))!
        let at2 = Equivocation(events[1], .fixture(mallory, 2, .chat(text: "other 2")))!
        log.quarantine(at3)
        #expect(log.vector[mallory] == 2)
        log.quarantine(at2)
        #expect(log.vector[mallory] == 1)
        log.quarantine(at3)
        #expect(log.faults[mallory] == at2)
        #expect(log.vector[mallory] == 1)
    }

    @Test func aProofNeedsTwoDifferentEventsWithOneID() {
        let x = Event.fixture(mallory, 2, .chat(text: "7-0"))
        #expect(Equivocation(x, x) == nil)
        #expect(Equivocation(x, .fixture(mallory, 3, .chat(text: "7-0"))) == nil)
        #expect(Equivocation(x, .fixture(mallory, 2, .chat(text: "7-0"), room: "worldcup")) == nil)
        let y = Event.fixture(mallory, 2, .chat(text: "0-7"))
        #expect(Equivocation(x, y) == Equivocation(y, x))
    }

    @Test func aPeerThatHasNotSeenTheProofGetsItAndDoesNotLookAhead() {
        var log = RoomLog(room: "superbowl")
        let events = (1...3).map { Event.fixture(mallory, UInt64($0), .chat(text: "\($0)")) }
        for event in events { _ = log.insert(event) }
        let proof = Equivocation(events[1], .fixture(mallory, 2, .chat(text: "other")))!
        log.quarantine(proof)
        let unaware: VersionVector = [mallory: 3, alice: 1]
        #expect(log.evidence(missingFrom: unaware) == [proof])
        #expect(log.capped(unaware) == [mallory: 1, alice: 1])
        #expect(log.evidence(missingFrom: [mallory: 1]).isEmpty)
    }

    /// A node that joins after the fault holds mallory's events below it, and alice's event that
    /// named the dropped one: nobody will ever serve mallory#2, so it needs the proof.
    @Test func aLateJoinerGetsTheProofWithTheEventsThatNeedIt() {
        let join = Event.fixture(mallory, 1, .join(nick: "mallory"))
        let x = Event.fixture(mallory, 2, .chat(text: "7-0"))
        let y = Event.fixture(mallory, 2, .chat(text: "0-7"))
        let aliceAfterX = Event.fixture(alice, 1, .chat(text: "nice"), context: [mallory: 2])
        var bob = RoomLog(room: "superbowl")
        for event in [join, x, aliceAfterX, y] { _ = bob.insert(event) }
        #expect(bob.faults[mallory] != nil)

        // A pull: the batch carries the proof ahead of alice's event.
        let response = bob.response(to: SyncRequest(from: carol, room: "superbowl", have: [:], limit: 1024))
        #expect(Set(response.events.prefix(2)) == [x, y])
        var carolLog = RoomLog(room: "superbowl")
        for event in response.events { _ = carolLog.insert(event) }
        #expect(carolLog.faults[mallory] != nil)
        #expect(carolLog.deliveryOrder == [join.id, aliceAfterX.id])

        // A digest from a node holding alice's event but not the proof gets the proof pushed.
        var dave = RoomLog(room: "superbowl")
        for event in [join, aliceAfterX] { _ = dave.insert(event) }
        #expect(bob.evidence(missingFrom: dave.vector).map(\.seq) == [2])
        #expect(bob.evidence(missingFrom: [mallory: 1]).isEmpty)
        #expect(bob.evidence(for: [aliceAfterX]).count == 1)
        #expect(bob.evidence(for: [join]).isEmpty)
    }

    // MARK: Fingerprints

    @Test func fingerprintsAgreeOnTheSameEventsAndShowWhereTwoLogsDiffer() {
        let join = Event.fixture(mallory, 1, .join(nick: "mallory"))
        let x = Event.fixture(mallory, 2, .chat(text: "7-0"))
        let y = Event.fixture(mallory, 2, .chat(text: "0-7"))
        // The same third event after both: the heads agree, the chains do not.
        let third = Event.fixture(mallory, 3, .chat(text: "same"), context: [mallory: 2])
        var alice = RoomLog(room: "superbowl")
        var bob = RoomLog(room: "superbowl")
        for event in [join, x, third] { _ = alice.insert(event) }
        for event in [join, y, third] { _ = bob.insert(event) }
        #expect(alice.vector == bob.vector)
        #expect(alice.fingerprint(of: mallory, at: 1) == bob.fingerprint(of: mallory, at: 1))
        #expect(alice.fingerprint(of: mallory, at: 3) != bob.fingerprint(of: mallory, at: 3))
        #expect(alice.divergence(from: bob.vector, fingerprints: bob.fingerprints) == [mallory: 3])

        var carolLog = RoomLog(room: "superbowl")
        for event in [third, x, join] { _ = carolLog.insert(event) }
        #expect(carolLog.fingerprints == alice.fingerprints)
        #expect(alice.divergence(from: carolLog.vector, fingerprints: carolLog.fingerprints).isEmpty)
        // A peer further ahead cannot be compared at its seq; one behind is compared at its own.
        #expect(alice.divergence(from: [mallory: 9], fingerprints: [mallory: 1]).isEmpty)
        #expect(bob.divergence(from: [mallory: 2], fingerprints: [mallory: alice.fingerprint(of: mallory, at: 2)!]) == [mallory: 2])
    }

    // MARK: Waiting

    @Test func anEventWhoseContextNeverComesIsAbandonedAndStopsBlockingOthers() {
        var log = RoomLog(room: "superbowl")
        let join = Event.fixture(mallory, 1, .join(nick: "mallory"))
        let impossible = Event.fixture(mallory, 2, .chat(text: "never"), context: [carol: 999])
        let after = Event.fixture(alice, 1, .chat(text: "after"), context: [mallory: 2])
        for event in [join, impossible] { _ = log.insert(event, now: .epoch + .seconds(1)) }
        _ = log.insert(after, now: .epoch + .seconds(5))
        #expect(log.nextExpiry == .epoch + .seconds(61))
        #expect(log.expire(now: .epoch + .milliseconds(60_999)).isEmpty)

        let given = log.expire(now: .epoch + .seconds(61))
        #expect(given.abandoned == [impossible])
        #expect(given.delivered == [after])
        #expect(log.abandoned == [impossible.id])
        #expect(!log.delivered.contains(impossible))
        #expect(log.waitingCount == 0)
        #expect(log.nextExpiry == nil)
        // Still held: a peer asking for mallory#2 gets it, and nothing repairs forever.
        #expect(log.vector == [mallory: 2, alice: 1])
    }

    @Test func eventsPastAGapNobodyFillsAreDroppedAfterTheWait() {
        var log = RoomLog(room: "superbowl")
        _ = log.insert(.fixture(alice, 1, .join(nick: "alice")), now: .epoch)
        _ = log.insert(.fixture(alice, 5, .chat(text: "5")), now: .epoch + .milliseconds(100))
        _ = log.insert(.fixture(alice, 6, .chat(text: "6")), now: .epoch + .milliseconds(200))
        #expect(log.nextExpiry == .epoch + .milliseconds(60_100))
        let given = log.expire(now: .epoch + .milliseconds(60_100))
        #expect(given.dropped == [EventID(origin: alice, seq: 5), EventID(origin: alice, seq: 6)])
        #expect(log.count == 1)
        #expect(log.bufferedBytes == 0)
        #expect(log.waitingCount == 0)
    }

    @Test func theWaitRestartsWhenTheFirstWaitingEventChanges() {
        var log = RoomLog(room: "superbowl")
        _ = log.insert(.fixture(alice, 1, .join(nick: "alice")), now: .epoch)
        _ = log.insert(.fixture(alice, 3, .chat(text: "3")), now: .epoch)
        #expect(log.nextExpiry == .epoch + .seconds(60))
        // The gap at 2 is filled; a new one opens at 4 later.
        _ = log.insert(.fixture(alice, 2, .chat(text: "2")), now: .epoch + .seconds(30))
        _ = log.insert(.fixture(alice, 5, .chat(text: "5")), now: .epoch + .seconds(30))
        #expect(log.nextExpiry == .epoch + .seconds(90))
    }

    /// A batch can hold an origin's seqs 1…5 and then another version of its seq 3: the screen
    /// asks with `held: 5` about an event below it, which must be answered, not trap.
    @Test func aScreenedEventBelowTheBatchesReachIsNotPastAGap() {
        let log = RoomLog(room: "superbowl")
        let other3 = Event.fixture(mallory, 3, .chat(text: "another 3"))
        #expect(log.rejection(of: other3, held: 5) == nil)
        #expect(log.rejection(of: .fixture(mallory, 5 + RoomLog.maximumGap + 1, .leave), held: 5) == .tooFarAhead)
    }

    /// Whatever a peer sends, in whatever order, with whatever the screen guesses the batch holds:
    /// the log never traps, and its counts stay consistent. Random events from four origins (seqs
    /// 1–12, random contexts, two versions of many ids), random `held` hints, expiry and
    /// quarantines interleaved.
    @Test(arguments: [11, 12, 13, 14] as [UInt64])
    func randomHostileInputNeverTrapsAndKeepsTheCountsConsistent(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        func pick(_ n: UInt64) -> UInt64 { random.next() % n }
        let origins = [alice, bob, carol, mallory]
        var limits = RoomLogLimits()
        limits.maxStrangerEvents = 3
        limits.maxAheadEvents = 5
        var log = RoomLog(room: "superbowl", limits: limits)
        var now = WallTime.epoch
        for _ in 0..<3_000 {
            now += .milliseconds(pick(2_000))
            let origin = origins[Int(pick(4))]
            let seq = 1 + pick(12)
            var context = VersionVector()
            for other in origins where other != origin && pick(3) == 0 { context[other] = 1 + pick(14) }
            let event = Event.fixture(origin, seq, .chat(text: "v\(pick(2))"), context: context)
            _ = log.rejection(of: event, held: pick(15), aheadAllowance: Int(pick(100_000)))
            switch log.insert(event, now: now, aheadAllowance: Int(pick(100_000))) {
            case .accepted, .duplicate, .equivocation, .rejected, .unseated: break
            }
            if pick(50) == 0 { _ = log.expire(now: now) }
            #expect(log.waitingCount >= 0)
            #expect(log.waitingCount <= log.count)
            #expect(log.bufferedBytes >= 0)
            for origin in origins { #expect(log.deliveredVector[origin] <= log.vector[origin]) }
        }
        _ = log.expire(now: now + limits.maxWait)
        #expect(log.waitingCount == 0 || log.nextExpiry != nil)
    }

    // MARK: Budgets

    @Test func aStrangerGetsASmallBudgetPastItsMissingJoin() {
        var limits = RoomLogLimits()
        limits.maxStrangerEvents = 4
        var log = RoomLog(room: "superbowl", limits: limits)
        let outcomes = (2...10).map { log.insert(.fixture(mallory, UInt64($0), .chat(text: "\($0)"))) }
        #expect(outcomes.prefix(4).allSatisfy { $0 == .accepted(delivered: []) })
        #expect(outcomes.dropFirst(4).allSatisfy {
            if case .rejected(.overBudget) = $0 { true } else { false }
        })
        #expect(log.count == 4)
        // Its join brings it in, and the buffered events with it.
        #expect(log.insert(.fixture(mallory, 1, .join(nick: "m"))).deliveredCount == 5)
    }

    /// Throwaway keys each sending events without a join: only so many strangers are held at
    /// once; a member's events past a gap are not counted among them, and a stranger already
    /// held may still add to its own budget.
    @Test func onlySoManyStrangersAreHeldAtOnce() {
        var limits = RoomLogLimits()
        limits.maxStrangerOrigins = 3
        var log = RoomLog(room: "superbowl", limits: limits)
        _ = log.insert(.fixture(alice, 1, .join(nick: "alice")))
        #expect(log.insert(.fixture(alice, 3, .chat(text: "past a gap"))) == .accepted(delivered: []))
        let keys = (10...15).map { NodeID.fixture(UInt8($0)) }
        let outcomes = keys.map { log.insert(.fixture($0, 2, .chat(text: "no join"))) }
        #expect(outcomes.prefix(3).allSatisfy { $0 == .accepted(delivered: []) })
        #expect(outcomes.dropFirst(3).allSatisfy { if case .rejected(.overBudget) = $0 { true } else { false } })
        #expect(log.insert(.fixture(keys[0], 3, .chat(text: "more"))) == .accepted(delivered: []))
        // One joins: a place frees up.
        #expect(log.insert(.fixture(keys[1], 1, .join(nick: "k"))).deliveredCount == 2)
        #expect(log.insert(.fixture(keys[5], 2, .chat(text: "now"))) == .accepted(delivered: []))
    }

    @Test func bytesPastGapsAreBoundedPerOriginPerRoomAndByTheCallersAllowance() {
        var limits = RoomLogLimits()
        limits.maxAheadBytes = 3_000
        limits.maxRoomAheadBytes = 5_000
        var log = RoomLog(room: "superbowl", limits: limits)
        let text = String(repeating: "x", count: 1_000)
        for origin in [alice, bob] { _ = log.insert(.fixture(origin, 1, .join(nick: "n"))) }
        let aliceAhead = (3...6).map { log.insert(.fixture(alice, UInt64($0), .chat(text: text))) }
        #expect(aliceAhead.filter { $0 == .accepted(delivered: []) }.count == 2)  // 3 000 bytes per origin
        let bobAhead = (3...6).map { log.insert(.fixture(bob, UInt64($0), .chat(text: text))) }
        #expect(bobAhead.filter { $0 == .accepted(delivered: []) }.count == 2)  // 5 000 in the room
        #expect(log.bufferedBytes <= 5_000)
        let tight = log.insert(.fixture(carol, 1, .join(nick: "c")), aheadAllowance: 0)
        #expect(tight == .accepted(delivered: [.fixture(carol, 1, .join(nick: "c"))]))  // not past a gap
        #expect(log.rejection(of: .fixture(carol, 3, .chat(text: text)), aheadAllowance: 10) == .overBudget("bytes held past gaps"))
    }

    @Test func aRoomHoldsEventsOfAtMostSoManyOrigins() {
        var limits = RoomLogLimits()
        limits.maxOrigins = 3
        var log = RoomLog(room: "superbowl", limits: limits)
        for n in 1...3 { _ = log.insert(.fixture(.fixture(UInt8(n)), 1, .join(nick: "n\(n)"))) }
        #expect(log.insert(.fixture(.fixture(4), 1, .join(nick: "n4"))) == .unseated(delivered: []))
        #expect(log.insert(.fixture(.fixture(1), 2, .chat(text: "still fine"))) != .rejected(.tooManyOrigins))
    }

    /// Fresh keys' joins fill the open slots and stop there: the reserved ones go only to origins
    /// with a node behind them, so a newcomer who answers probes still gets in.
    @Test func theLastSlotsAreKeptForOriginsWithANodeBehindThem() {
        var limits = RoomLogLimits()
        limits.maxOrigins = 5
        limits.reservedOrigins = 2
        var log = RoomLog(room: "superbowl", limits: limits)
        let live: Set<NodeID> = [alice, bob, carol]
        let reserved = { (origin: NodeID) in live.contains(origin) ? ReservedSeat.host("192.0.2.\(origin.bytes[0])") : .refused }
        _ = log.insert(.fixture(alice, 1, .join(nick: "alice")), reserved: reserved)
        let keys = (10...20).map { NodeID.fixture(UInt8($0)) }
        let outcomes = keys.map { log.insert(.fixture($0, 1, .join(nick: "key")), reserved: reserved) }
        #expect(outcomes.filter { $0.deliveredCount == 1 }.count == 2)  // 3 open slots, alice has one
        #expect(outcomes.dropFirst(2).allSatisfy { $0 == .unseated(delivered: []) })
        #expect(log.insert(.fixture(bob, 1, .join(nick: "bob")), reserved: reserved).deliveredCount == 1)
        #expect(log.insert(.fixture(carol, 1, .join(nick: "carol")), reserved: reserved).deliveredCount == 1)
        // Full: not even a live newcomer gets a sixth slot.
        #expect(log.rejection(of: .fixture(.fixture(99), 1, .join(nick: "dave")), reserved: { _ in .unlimited }) == .tooManyOrigins)
    }

    /// One machine answers probes for many keys (each on its own port): its keys take at most
    /// its host's share of the reserved slots, and a node from another host still gets in.
    @Test func oneHostTakesAtMostItsShareOfTheReservedSlots() {
        var limits = RoomLogLimits()
        limits.maxOrigins = 12
        limits.reservedOrigins = 8
        limits.reservedPerHost = 3
        var log = RoomLog(room: "superbowl", limits: limits)
        let sybils = (10...25).map { NodeID.fixture(UInt8($0)) }
        let reserved = { (origin: NodeID) in origin == carol ? ReservedSeat.host("192.0.2.13") : .host("192.0.2.99") }
        let outcomes = sybils.map { log.insert(.fixture($0, 1, .join(nick: "key")), reserved: reserved) }
        #expect(outcomes.filter { $0.deliveredCount == 1 }.count == 4 + 3)  // the open slots, then the host's share
        #expect(log.insert(.fixture(carol, 1, .join(nick: "carol")), reserved: reserved).deliveredCount == 1)
    }

    /// Issue 45: 32 keys proven from 4 hosts took every reserved slot, and a newcomer's messages
    /// were not shown. Origins proven only by answering share half of the slots, from however
    /// many hosts; a node DNS-SD announced still gets in.
    @Test func keysProvenFromManyHostsLeaveSeatsForAnnouncedNodes() {
        var limits = RoomLogLimits()
        limits.maxOrigins = 100
        limits.reservedOrigins = 32
        var log = RoomLog(room: "superbowl", limits: limits)
        let open = (100...167).map { NodeID.fixture(UInt8($0)) }
        for key in open { _ = log.insert(.fixture(key, 1, .join(nick: "key")), reserved: { _ in .refused }) }
        let sybils = (0..<32).map { NodeID.fixture(UInt8(10 + $0)) }
        let host = Dictionary(uniqueKeysWithValues: sybils.enumerated().map { ($1, "192.0.2.\(60 + $0 / 8)") })
        let reserved = { (origin: NodeID) in origin == carol ? ReservedSeat.announced("192.0.2.13") : .host(host[origin]!) }
        let outcomes = sybils.map { log.insert(.fixture($0, 1, .join(nick: "key")), reserved: reserved) }
        #expect(outcomes.filter { $0.deliveredCount == 1 }.count == limits.reservedForProven)
        #expect(log.insert(.fixture(carol, 1, .join(nick: "carol")), reserved: reserved).deliveredCount == 1)
    }

    /// A room with `maxOrigins` origin slots, the last `reservedOrigins` of them reserved, whose
    /// open slots alice and bob took first.
    func roomOfAliceAndBob(maxOrigins: Int, reservedOrigins: Int) -> RoomLog {
        var limits = RoomLogLimits()
        limits.maxOrigins = maxOrigins
        limits.reservedOrigins = reservedOrigins
        var log = RoomLog(room: "superbowl", limits: limits)
        _ = log.insert(.fixture(alice, 1, .join(nick: "alice")))
        _ = log.insert(.fixture(bob, 1, .join(nick: "bob")))
        return log
    }

    /// Another node seated an origin this one did not: a member's message naming it in its
    /// context is delivered all the same, whichever arrives first, and digests stop asking for it.
    @Test func nothingWaitsForAnOriginThatFoundNoSlot() {
        let stranger = NodeID.fixture(77)
        let strangerJoin = Event.fixture(stranger, 1, .join(nick: "x"))
        let chat = Event.fixture(bob, 2, .chat(text: "seen the kick?"), context: [stranger: 1])
        for strangerFirst in [true, false] {
            var log = roomOfAliceAndBob(maxOrigins: 2, reservedOrigins: 0)
            if strangerFirst {
                #expect(log.insert(strangerJoin) == .unseated(delivered: []))
                #expect(log.insert(chat) == .accepted(delivered: [chat]))
            } else {
                #expect(log.insert(chat) == .accepted(delivered: []))
                #expect(log.insert(strangerJoin) == .unseated(delivered: [chat]))
            }
            #expect(log.isUnseated(stranger))
            #expect(log.capped([stranger: 1, bob: 2]) == [bob: 2])
        }
    }

    /// A node that takes a big room in from scratch (a late joiner, a node back from a power cut)
    /// fills the open slots with whoever comes first, before it has vouched for anyone: the
    /// member after them is unseated, and digests stop offering its events. Once it has a node
    /// behind it, reconsidered, its events are asked for again and its join takes a reserved seat.
    @Test func anOriginUnseatedBeforeItWasVouchedForTakesAReservedSeatOnceReconsidered() {
        let dave = NodeID.fixture(78)
        let join = Event.fixture(dave, 1, .join(nick: "dave"))
        var log = roomOfAliceAndBob(maxOrigins: 3, reservedOrigins: 1)
        #expect(log.insert(join, reserved: { _ in .refused }) == .unseated(delivered: []))
        #expect(log.capped([dave: 4])[dave] == 0)

        log.reconsider(dave)
        #expect(!log.isUnseated(dave))
        #expect(log.capped([dave: 4])[dave] == 4)  // a peer's digest offers dave's events again
        #expect(log.insert(join, reserved: { _ in .host("192.0.2.8") }) == .accepted(delivered: [join]))
        #expect(log.vector[dave] == 1)
    }

    @Test func theUnseatedAreForgottenOldestFirst() {
        var unseated = UnseatedOrigins()
        for n in 1...10 { _ = unseated.insert(.fixture(UInt8(n)), keeping: 4) }
        #expect(unseated.origins == Set((7...10).map { NodeID.fixture(UInt8($0)) }))
        let again = unseated.insert(.fixture(9), keeping: 4)
        #expect(!again)
        unseated.remove(.fixture(9))
        let new = unseated.insert(.fixture(11), keeping: 4)
        #expect(new)
        #expect(unseated.origins == Set([7, 8, 10, 11].map { NodeID.fixture(UInt8($0)) }))
    }

    /// Strangers (events past a gap, no join) are bounded by bytes, not by taking origin slots:
    /// a swarm of fresh keys sending one event each must not lock a real newcomer out.
    @Test func strangersDoNotTakeOriginSlots() {
        var limits = RoomLogLimits()
        limits.maxOrigins = 3
        var log = RoomLog(room: "superbowl", limits: limits)
        _ = log.insert(.fixture(alice, 1, .join(nick: "alice")))
        for n in 10...40 { _ = log.insert(.fixture(.fixture(UInt8(n)), 2, .chat(text: "x"))) }
        #expect(log.insert(.fixture(bob, 1, .join(nick: "bob"))).deliveredCount == 1)
        #expect(log.insert(.fixture(carol, 1, .join(nick: "carol"))).deliveredCount == 1)
    }
}

extension RoomLog.InsertOutcome {
    var deliveredCount: Int {
        if case .accepted(let delivered) = self { delivered.count } else { -1 }
    }
}
