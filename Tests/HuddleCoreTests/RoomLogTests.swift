import Testing

@testable import HuddleCore

@Suite(.offThePool) struct RoomLogTests {
    let alice = NodeID.fixture(1)
    let bob = NodeID.fixture(2)

    @Test func deliversOnlyAfterTheCausalContext() {
        let hello = Event.fixture(alice, 1, .chat(text: "hello"))
        let reply = Event.fixture(bob, 1, .chat(text: "hi alice"), context: [alice: 1])
        var log = RoomLog(room: "superbowl")

        #expect(log.insert(reply) == .accepted(delivered: []))
        #expect(log.waitingCount == 1)
        #expect(log.insert(hello) == .accepted(delivered: [hello, reply]))
        #expect(log.deliveryOrder == [hello.id, reply.id])
        #expect(log.vector == [alice: 1, bob: 1])
    }

    @Test func buffersAGapInOneOriginUntilItIsFilled() {
        let events = (1...3).map { Event.fixture(alice, UInt64($0), .chat(text: "\($0)")) }
        var log = RoomLog(room: "superbowl")
        #expect(log.insert(events[2]) == .accepted(delivered: []))
        #expect(log.vector[alice] == 0)
        #expect(log.contains(events[2].id))
        #expect(log.insert(events[0]) == .accepted(delivered: [events[0]]))
        #expect(log.insert(events[1]) == .accepted(delivered: [events[1], events[2]]))
        #expect(log.vector[alice] == 3)
        #expect(log.waitingCount == 0)
    }

    @Test func duplicatesChangeNothing() {
        let hello = Event.fixture(alice, 1, .chat(text: "hello"))
        var log = RoomLog(room: "superbowl")
        _ = log.insert(hello)
        #expect(log.insert(hello) == .duplicate)
        #expect(log.count == 1)
        #expect(log.delivered == [hello])
        #expect(log.faults.isEmpty)
    }

    @Test func malformedEventsAreRejectedAndChangeNothing() {
        var log = RoomLog(room: "superbowl")
        let otherRoom = Event.fixture(alice, 1, .leave, room: "worldcup")
        #expect(log.insert(otherRoom) == .rejected(.wrongRoom("worldcup")))
        let zero = Event(
            id: EventID(origin: alice, seq: 0), room: "superbowl", createdAt: .epoch, context: [:], body: .leave,
            signature: [])
        #expect(log.insert(zero) == .rejected(.zeroSequence))
        let selfDependent = Event(
            id: EventID(origin: alice, seq: 2), room: "superbowl", createdAt: .epoch, context: [alice: 2], body: .leave,
            signature: [])
        #expect(log.insert(selfDependent) == .rejected(.inconsistentContext))
        #expect(log.insert(.fixture(alice, RoomLog.maximumGap + 1, .leave)) == .rejected(.tooFarAhead))
        #expect(log.count == 0)
        #expect(log.vector.isEmpty)
    }

    @Test func nextEventHeaderFollowsOwnSeqAndCarriesWhatWasShown() {
        var log = RoomLog(room: "superbowl")
        _ = log.insert(.fixture(bob, 1, .join(nick: "bob")))
        _ = log.insert(.fixture(bob, 3, .leave))  // waiting behind a gap: not part of the context
        let header = log.nextEventHeader(origin: alice)
        #expect(header.id == EventID(origin: alice, seq: 1))
        #expect(header.context == [bob: 1])
    }

    @Test func missingPagesThroughWhatThePeerLacks() {
        var full = RoomLog(room: "superbowl")
        for seq in 1...5 { _ = full.insert(.fixture(alice, UInt64(seq), .chat(text: "a\(seq)"))) }
        for seq in 1...3 { _ = full.insert(.fixture(bob, UInt64(seq), .chat(text: "b\(seq)"))) }
        let page = full.missing(for: [alice: 2], limit: 4)
        #expect(page.map(\.id) == [3, 4, 5].map { EventID(origin: alice, seq: $0) } + [EventID(origin: bob, seq: 1)])
        #expect(full.missing(for: full.vector).isEmpty)
    }

    // MARK: Convergence, on seeded random histories

    /// A random history of a room: nodes make events on what they have seen and pass events
    /// between them in random order, so contexts are a real mix of concurrent and causal.
    static func randomHistory(seed: UInt64, nodes: Int = 4, steps: Int = 120) -> [Event] {
        var rng = SplitMix64(seed: seed)
        let ids = (1...nodes).map { NodeID.fixture(UInt8($0)) }
        var logs = ids.map { _ in RoomLog(room: "superbowl") }
        var all: [Event] = []
        for step in 0..<steps {
            let who = Int.random(in: 0..<nodes, using: &rng)
            if all.isEmpty || Int.random(in: 0..<3, using: &rng) == 0 {
                let header = logs[who].nextEventHeader(origin: ids[who])
                let event = Event(
                    id: header.id, room: "superbowl", createdAt: .epoch + .milliseconds(step), context: header.context,
                    body: .chat(text: "step \(step)"), signature: [])
                _ = logs[who].insert(event)
                all.append(event)
            } else {
                _ = logs[who].insert(all.randomElement(using: &rng)!)
            }
        }
        return all
    }

    static let seeds: [UInt64] = Array(1...40)

    @Test(arguments: seeds) func sameEventsInAnyOrderWithDuplicatesGiveTheSameState(seed: UInt64) {
        var rng = SplitMix64(seed: seed &* 7919)
        let history = Self.randomHistory(seed: seed)
        var reference: RoomLog?
        for _ in 0..<5 {
            var arrivals = history + history.filter { _ in Int.random(in: 0..<4, using: &rng) == 0 }
            arrivals.shuffle(using: &rng)
            var log = RoomLog(room: "superbowl")
            for event in arrivals {
                let outcome = log.insert(event)
                guard case .rejected = outcome else { continue }
                Issue.record("rejected \(event.id): \(outcome)")
            }
            #expect(log.count == history.count)
            #expect(log.deliveryOrder.count == history.count)
            #expect(log.waitingCount == 0)
            Self.expectCausal(log)
            if let reference {
                #expect(log.vector == reference.vector)
                #expect(log.deliveredVector == reference.deliveredVector)
                #expect(Set(log.deliveryOrder) == Set(reference.deliveryOrder))
            }
            reference = log
        }
    }

    @Test(arguments: seeds) func aSubsetDeliversOnlyWhatItsContextAllows(seed: UInt64) {
        var rng = SplitMix64(seed: seed &+ 1000)
        let history = Self.randomHistory(seed: seed)
        var log = RoomLog(room: "superbowl")
        for event in history.shuffled(using: &rng) where Bool.random(using: &rng) {
            _ = log.insert(event)
        }
        Self.expectCausal(log)
        #expect(log.vector.dominates(log.deliveredVector))
    }

    @Test(arguments: seeds) func antiEntropyPullsBringALaggingLogUpToDate(seed: UInt64) {
        var rng = SplitMix64(seed: seed &+ 2000)
        let history = Self.randomHistory(seed: seed)
        var full = RoomLog(room: "superbowl")
        var lagging = RoomLog(room: "superbowl")
        for event in history { _ = full.insert(event) }
        for event in history.shuffled(using: &rng) where Int.random(in: 0..<3, using: &rng) == 0 {
            _ = lagging.insert(event)
        }
        var rounds = 0
        while case let page = full.missing(for: lagging.vector, limit: 16), !page.isEmpty {
            for event in page { _ = lagging.insert(event) }
            rounds += 1
            #expect(rounds <= history.count, "pulls must make progress")
            if rounds > history.count { break }
        }
        #expect(lagging.vector == full.vector)
        #expect(lagging.deliveredVector == full.deliveredVector)
    }

    /// Every delivered event comes after each event its context names.
    static func expectCausal(_ log: RoomLog, sourceLocation: SourceLocation = #_sourceLocation) {
        var position: [EventID: Int] = [:]
        for (index, id) in log.deliveryOrder.enumerated() { position[id] = index }
        for (index, id) in log.deliveryOrder.enumerated() {
            for (origin, seq) in log.event(id)!.context.entries {
                let dependency = EventID(origin: origin, seq: seq)
                #expect(
                    (position[dependency] ?? .max) < index, "\(id) delivered before \(dependency)",
                    sourceLocation: sourceLocation)
            }
        }
    }
}

@Suite(.offThePool) struct RoomLogBatchTests {
    let alice = NodeID.fixture(1)

    func log(_ count: UInt64, text: String = "x") -> RoomLog {
        var log = RoomLog(room: "superbowl")
        for seq in 1...count { _ = log.insert(.fixture(alice, seq, .chat(text: text))) }
        return log
    }

    @Test func aBatchStopsAtTheEventLimit() {
        let (events, more) = log(10).batch(missingFor: VersionVector(), maxEvents: 4, maxBytes: .max)
        #expect(events.map(\.seq) == [1, 2, 3, 4])
        #expect(more)
    }

    @Test func aBatchStopsAtTheByteBudgetButCarriesAtLeastOneEvent() {
        let big = log(5, text: String(repeating: "y", count: 1000))
        let one = big.events(2)  // seq 1 has an empty context and is the smallest
        let (events, more) = big.batch(missingFor: VersionVector(), maxEvents: 100, maxBytes: 2 * one + 10)
        #expect(events.count == 2 && more)
        let (single, _) = big.batch(missingFor: VersionVector(), maxEvents: 100, maxBytes: 1)
        #expect(single.count == 1)
    }

    @Test func aBatchIsWhatThePeerMisses() {
        var have = VersionVector()
        have[alice] = 7
        let (events, more) = log(10).batch(missingFor: have, maxEvents: 100, maxBytes: .max)
        #expect(events.map(\.seq) == [8, 9, 10])
        #expect(!more)
    }
}

extension RoomLog {
    /// Encoded size of the event with this seq: the unit the byte-budget test counts in.
    fileprivate func events(_ seq: UInt64) -> Int {
        missing(for: VersionVector(), limit: Int(seq)).last!.encodedByteCount
    }
}
