import Testing

@testable import HuddleCore

/// Every rule of ``Replication``, driven with a seeded generator and a clock of its own.
@Suite(.offThePool) struct ReplicationTests {
    let room = "superbowl"
    let bob = Self.peer(2)
    let carol = Self.peer(3)
    let ms = TimeSpan.milliseconds(1)

    static func peer(_ n: UInt8) -> Peer {
        Peer(
            id: .fixture(n), nick: "n\(n)", address: PeerAddress(host: "192.0.2.\(10 + n)", port: 7400),
            rooms: ["superbowl"], state: .alive, incarnation: 1, lastSeen: .start, rtt: nil, foundBy: .seed)
    }

    func vector(_ entries: (UInt8, UInt64)...) -> VersionVector {
        var vector = VersionVector()
        for (n, seq) in entries { vector[.fixture(n)] = seq }
        return vector
    }

    func state(
        peers: [Peer]? = nil, vector: VersionVector = VersionVector(), waiting: Bool = false
    ) -> Replication.RoomState {
        Replication.RoomState(peers: peers ?? [bob, carol], vector: vector, waiting: waiting)
    }

    func digests(_ directives: [ReplicationDirective]) -> [PeerAddress] {
        directives.compactMap { if case .sendDigest(_, let to) = $0 { to } else { nil } }
    }

    /// This node's event `seq` (node 1 is this node).
    func mine(_ seq: UInt64) -> Event { .fixture(.fixture(1), seq, .chat(text: "hi")) }

    /// An event of peer `n` whose context covers this node's events up to `seen`.
    func theirs(_ n: UInt8, seeing seen: UInt64) -> Event {
        .fixture(.fixture(n), 1, .chat(text: "ok"), context: vector((1, seen)))
    }

    func schedule(_ directives: [ReplicationDirective]) -> MonotonicTime? {
        directives.compactMap { if case .scheduleTick(let at) = $0 { at } else { nil } }.last
    }

    @Test func everyRoundSwapsDigestsWithOneRandomPeerPerRoom() {
        var replication = Replication(random: SplitMix64(seed: 1))
        let first = replication.tick(now: .start, rooms: [room: state(), "chess": state(peers: [])])
        #expect(digests(first).count == 1)
        #expect(schedule(first) == .start + 1000 * ms)
        // Nothing due before the round.
        #expect(digests(replication.tick(now: .start + 500 * ms, rooms: [room: state()])).isEmpty)
        // Over many rounds both peers are picked.
        var picked: Set<PeerAddress> = []
        for round in 1...20 { picked.formUnion(digests(replication.tick(now: .start + Int64(round) * 1000 * ms, rooms: [room: state()]))) }
        #expect(picked == [bob.address, carol.address])
    }

    @Test func theSameSeedMakesTheSameChoices() {
        func run() -> [ReplicationDirective] {
            var replication = Replication(random: SplitMix64(seed: 99))
            return (0..<10).flatMap { replication.tick(now: .start + Int64($0) * 1000 * ms, rooms: [room: state()]) }
        }
        #expect(run() == run())
    }

    @Test func aGapIsRepairedAtOnceThenRetriedUntilClosed() {
        var replication = Replication(random: SplitMix64(seed: 2))
        _ = replication.tick(now: .start, rooms: [room: state()])
        let now = MonotonicTime.start + 10 * ms
        let first = replication.received(room: room, events: [], from: bob.address, state: state(waiting: true), now: now)
        #expect(digests(first) == [bob.address])
        #expect(schedule(first) == now + 40 * ms)
        // More events arriving while the gap is open ask nothing more.
        #expect(replication.received(room: room, events: [], from: carol.address, state: state(waiting: true), now: now + ms).isEmpty)
        // Retries back off: 40, 80, 160, 320, then 500 ms.
        var at = now + 40 * ms
        for delay in [80, 160, 320, 500] as [Int64] {
            let retry = replication.tick(now: at, rooms: [room: state(waiting: true)])
            #expect(digests(retry).count == 1)
            #expect(schedule(retry) == min(at + delay * ms, .start + 1000 * ms))  // or the next round, if earlier
            at += delay * ms
        }
        // The last delay repeats (this tick is also the anti-entropy round: two digests).
        let later = replication.tick(now: at, rooms: [room: state(waiting: true)])
        #expect(digests(later).count == 2)
        #expect(schedule(later) == at + 500 * ms)
        at += 500 * ms
        // Closed: when the next retry would have gone, only the anti-entropy round does.
        #expect(replication.received(room: room, events: [], from: bob.address, state: state(waiting: false), now: at).isEmpty)
        #expect(digests(replication.tick(now: at + 500 * ms, rooms: [room: state()])).count == 1)
    }

    @Test func aGapFromAPullIsRepairedOnTheTimer() {
        var replication = Replication(random: SplitMix64(seed: 3))
        _ = replication.tick(now: .start, rooms: [room: state()])
        let directives = replication.received(room: room, events: [], from: nil, state: state(waiting: true), now: .start)
        #expect(digests(directives).isEmpty)
        #expect(schedule(directives) == .start + 40 * ms)
        #expect(digests(replication.tick(now: .start + 40 * ms, rooms: [room: state(waiting: true)])).count == 1)
    }

    @Test func aPeerThatMissesEventsGetsThemPushedAtMostEvery20ms() {
        var replication = Replication(random: SplitMix64(seed: 4))
        let mine = vector((1, 5)), theirs = vector((1, 3))
        let push = ReplicationDirective.pushMissing(room: room, have: theirs, to: bob.address)
        #expect(replication.digestReceived(room: room, from: bob, remote: theirs, local: mine, now: .start) == [push])
        #expect(replication.digestReceived(room: room, from: bob, remote: theirs, local: mine, now: .start + 10 * ms).isEmpty)
        #expect(replication.digestReceived(room: room, from: bob, remote: theirs, local: mine, now: .start + 20 * ms) == [push])
        // Another peer is answered on its own clock.
        #expect(replication.digestReceived(room: room, from: carol, remote: theirs, local: mine, now: .start + 21 * ms).count == 1)
    }

    @Test func aDigestHoldingOtherEventsAtTheSameSeqStartsOneRecheckPerOriginAndInterval() {
        var replication = Replication(random: SplitMix64(seed: 11))
        let mallory = NodeID.fixture(9)
        let same = vector((1, 5))
        let recheck = ReplicationDirective.recheck(room: room, peer: bob.id, origin: mallory, from: 1, address: bob.address)
        #expect(replication.digestReceived(room: room, from: bob, remote: same, local: same, divergent: [mallory: 5], now: .start) == [recheck])
        // One pull per peer at a time, and the same origin not again within the interval.
        #expect(replication.digestReceived(room: room, from: bob, remote: same, local: same, divergent: [mallory: 5], now: .start + ms).isEmpty)
        replication.pullFinished(room: room, peer: bob.id)
        #expect(replication.digestReceived(room: room, from: bob, remote: same, local: same, divergent: [mallory: 5], now: .start + 2 * ms).isEmpty)
        let later = MonotonicTime.start + replication.config.recheckInterval
        let deep = ReplicationDirective.recheck(room: room, peer: bob.id, origin: mallory, from: 2977, address: bob.address)
        #expect(replication.digestReceived(room: room, from: bob, remote: same, local: same, divergent: [mallory: 4000], now: later) == [deep])
    }

    @Test func aProofThePeerLacksIsPushedAtMostOnceAnIntervalPerPeerAndOrigin() throws {
        var replication = Replication(random: SplitMix64(seed: 12))
        let mallory = NodeID.fixture(9)
        let proof = try #require(Equivocation(
            .fixture(mallory, 2, .chat(text: "7-0")), .fixture(mallory, 2, .chat(text: "0-7"))))
        let same = vector((1, 5))
        func answer(_ peer: Peer, at now: MonotonicTime) -> [ReplicationDirective] {
            replication.digestReceived(room: room, from: peer, remote: same, local: same, evidence: [proof], now: now)
        }
        #expect(answer(bob, at: .start) == [.pushEvidence(proof, to: bob.address)])
        #expect(answer(bob, at: .start + 999 * ms).isEmpty)
        #expect(answer(carol, at: .start + 999 * ms) == [.pushEvidence(proof, to: carol.address)])
        #expect(answer(bob, at: .start + replication.config.evidenceInterval) == [.pushEvidence(proof, to: bob.address)])
    }

    @Test func equalVectorsNeedNothing() {
        var replication = Replication(random: SplitMix64(seed: 5))
        #expect(replication.digestReceived(room: room, from: bob, remote: vector((1, 5)), local: vector((1, 5)), now: .start).isEmpty)
    }

    @Test func missingAFewEventsAnswersAndKeepsAskingUntilTheyAreHere() {
        var replication = Replication(random: SplitMix64(seed: 6))
        _ = replication.tick(now: .start, rooms: [room: state()])
        let theirs = vector((2, 7)), mine = vector((2, 6))
        let answer = replication.digestReceived(room: room, from: bob, remote: theirs, local: mine, now: .start)
        #expect(digests(answer) == [bob.address])
        #expect(schedule(answer) == .start + 40 * ms)
        // Not waiting on anything it can see, but bob showed seq 7: retried until it is here.
        #expect(digests(replication.tick(now: .start + 40 * ms, rooms: [room: state(vector: mine)])).count == 1)
        _ = replication.received(room: room, events: [], from: bob.address, state: state(vector: theirs), now: .start + 50 * ms)
        #expect(digests(replication.tick(now: .start + 200 * ms, rooms: [room: state(vector: theirs)])).isEmpty)
    }

    @Test func missingMoreThanAPushCarriesIsPulledOnceAtATime() {
        var replication = Replication(random: SplitMix64(seed: 7))
        let theirs = vector((2, 500)), mine = vector((2, 10))
        let pull = ReplicationDirective.pull(room: room, peer: bob.id, from: bob.address)
        #expect(replication.digestReceived(room: room, from: bob, remote: theirs, local: mine, now: .start) == [pull])
        #expect(replication.digestReceived(room: room, from: bob, remote: theirs, local: mine, now: .start + 5000 * ms).isEmpty)
        replication.pullFinished(room: room, peer: bob.id)
        #expect(replication.digestReceived(room: room, from: bob, remote: theirs, local: mine, now: .start + 6000 * ms) == [pull])
    }

    @Test func bothSidesMissingSomethingPushAndAnswer() {
        var replication = Replication(random: SplitMix64(seed: 8))
        let theirs = vector((1, 3), (2, 9)), mine = vector((1, 5), (2, 8))
        let directives = replication.digestReceived(room: room, from: bob, remote: theirs, local: mine, now: .start)
        #expect(directives.contains(.pushMissing(room: room, have: theirs, to: bob.address)))
        #expect(digests(directives) == [bob.address])
    }

    @Test func aBurstEndsWithTwoRoundsOfTailDigests() {
        var replication = Replication(random: SplitMix64(seed: 9))
        _ = replication.tick(now: .start, rooms: [room: state()])
        #expect(schedule(replication.originated(mine(1), state: state(), now: .start + 10 * ms)) == .start + 110 * ms)
        // A later event postpones the tail.
        _ = replication.originated(mine(2), state: state(), now: .start + 50 * ms)
        #expect(digests(replication.tick(now: .start + 110 * ms, rooms: [room: state()])).isEmpty)
        let first = replication.tick(now: .start + 150 * ms, rooms: [room: state()])
        #expect(Set(digests(first)) == [bob.address, carol.address])
        #expect(schedule(first) == .start + 450 * ms)
        #expect(Set(digests(replication.tick(now: .start + 450 * ms, rooms: [room: state()]))) == [bob.address, carol.address])
        #expect(digests(replication.tick(now: .start + 900 * ms, rooms: [room: state()])).isEmpty)
    }

    @Test func tailDigestsWaitThreeOfTheLongestRoundTrips() {
        var replication = Replication(random: SplitMix64(seed: 12))
        _ = replication.tick(now: .start, rooms: [room: state()])
        var far = carol
        far.rtt = 30 * ms
        let peers = [bob, far]
        #expect(schedule(replication.originated(mine(1), state: state(peers: peers), now: .start)) == .start + 190 * ms)
        // A round trip is counted at most maxAnswerGrace (500 ms): the tail goes at 1.6 s.
        far.rtt = 10_000 * ms
        _ = replication.originated(mine(2), state: state(peers: [far]), now: .start)
        #expect(digests(replication.tick(now: .start + 1599 * ms, rooms: [room: state(peers: [far])])).count == 1)  // the round
        #expect(digests(replication.tick(now: .start + 1600 * ms, rooms: [room: state(peers: [far])])) == [far.address])
    }

    @Test func aRoomThatSpeaksAfterABurstNeedsNoTail() {
        var replication = Replication(random: SplitMix64(seed: 13))
        _ = replication.tick(now: .start, rooms: [room: state()])
        _ = replication.originated(mine(3), state: state(), now: .start)
        // An event that has not seen seq 3 witnesses nothing; one from this node's own origin
        // neither; the first that has is one witness, not yet enough.
        _ = replication.received(room: room, events: [theirs(2, seeing: 2)], from: bob.address, state: state(), now: .start + 20 * ms)
        _ = replication.received(room: room, events: [theirs(2, seeing: 3)], from: bob.address, state: state(), now: .start + 30 * ms)
        _ = replication.received(room: room, events: [theirs(2, seeing: 3)], from: bob.address, state: state(), now: .start + 40 * ms)
        #expect(digests(replication.tick(now: .start + 100 * ms, rooms: [room: state()])).count == 2)
        // A second burst, and two other nodes show they saw it: no tail at all.
        _ = replication.originated(mine(4), state: state(), now: .start + 200 * ms)
        _ = replication.received(
            room: room, events: [theirs(2, seeing: 4), theirs(3, seeing: 4)], from: bob.address, state: state(),
            now: .start + 250 * ms)
        for at in [300, 600, 900] as [Int64] {
            #expect(digests(replication.tick(now: .start + at * ms, rooms: [room: state()])).isEmpty)
        }
    }

    @Test func anAntiEntropyRoundSkipsARoomWhereTwoOthersSpoke() {
        var replication = Replication(random: SplitMix64(seed: 14))
        _ = replication.tick(now: .start, rooms: [room: state()])
        _ = replication.received(room: room, events: [theirs(2, seeing: 0)], from: bob.address, state: state(), now: .start + 10 * ms)
        #expect(digests(replication.tick(now: .start + 1000 * ms, rooms: [room: state()])).count == 1)
        _ = replication.received(
            room: room, events: [theirs(2, seeing: 0), theirs(3, seeing: 0)], from: bob.address, state: state(),
            now: .start + 1010 * ms)
        #expect(digests(replication.tick(now: .start + 2000 * ms, rooms: [room: state()])).isEmpty)
        // The next round starts counting afresh.
        #expect(digests(replication.tick(now: .start + 3000 * ms, rooms: [room: state()])).count == 1)
    }

    @Test func aRoomThatShowedLossKeepsItsTailsAndRoundsForTenSeconds() {
        var replication = Replication(random: SplitMix64(seed: 15))
        _ = replication.tick(now: .start, rooms: [room: state()])
        // A gap at 10 ms (repaired at once): the room is lossy for the next 10 s.
        _ = replication.received(room: room, events: [], from: bob.address, state: state(waiting: true), now: .start + 10 * ms)
        _ = replication.received(room: room, events: [], from: bob.address, state: state(), now: .start + 20 * ms)
        _ = replication.originated(mine(1), state: state(), now: .start + 100 * ms)
        _ = replication.received(
            room: room, events: [theirs(2, seeing: 1), theirs(3, seeing: 1)], from: bob.address, state: state(),
            now: .start + 150 * ms)
        #expect(digests(replication.tick(now: .start + 200 * ms, rooms: [room: state()])).count == 2)  // the tail still goes
        #expect(digests(replication.tick(now: .start + 500 * ms, rooms: [room: state()])).count == 2)  // both rounds
        #expect(digests(replication.tick(now: .start + 1000 * ms, rooms: [room: state()])).count == 1)  // and the round
        // Ten seconds without loss: clean again.
        _ = replication.received(
            room: room, events: [theirs(2, seeing: 1), theirs(3, seeing: 1)], from: bob.address, state: state(),
            now: .start + 10_500 * ms)
        #expect(digests(replication.tick(now: .start + 11_000 * ms, rooms: [room: state()])).isEmpty)
    }

    @Test func newPeersAndNewRoomsGetADigest() {
        let replication = Replication(random: SplitMix64(seed: 10))
        #expect(replication.peerAlive(bob, sharedRooms: ["b", "a"]) == [
            .sendDigest(room: "a", to: bob.address), .sendDigest(room: "b", to: bob.address),
        ])
        #expect(digests(replication.joined(room: room, peers: [bob, carol])) == [bob.address, carol.address])
    }

    @Test func leavingARoomForgetsItsRepairsAndTails() {
        var replication = Replication(random: SplitMix64(seed: 11))
        _ = replication.tick(now: .start, rooms: [room: state()])
        _ = replication.received(room: room, events: [], from: bob.address, state: state(waiting: true), now: .start)
        _ = replication.originated(mine(1), state: state(), now: .start)
        replication.left(room: room)
        #expect(digests(replication.tick(now: .start + 500 * ms, rooms: [room: state(waiting: true)])).isEmpty)
    }
}
