import Testing

@testable import HuddleCore

/// Every rule of ``Replication``, driven with a seeded generator and a clock in µs.
@Suite struct ReplicationTests {
    let room = "superbowl"
    let bob = Self.peer(2)
    let carol = Self.peer(3)
    let ms: Int64 = 1000

    static func peer(_ n: UInt8) -> Peer {
        Peer(
            id: .fixture(n), nick: "n\(n)", address: PeerAddress(host: "192.0.2.\(10 + n)", port: 7400),
            rooms: ["superbowl"], state: .alive, incarnation: 1, lastSeen: 0, rtt: nil, foundBy: .seed)
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

    func schedule(_ directives: [ReplicationDirective]) -> Int64? {
        directives.compactMap { if case .scheduleTick(let at) = $0 { at } else { nil } }.last
    }

    @Test func everyRoundSwapsDigestsWithOneRandomPeerPerRoom() {
        var replication = Replication(random: SplitMix64(seed: 1))
        let first = replication.tick(now: 0, rooms: [room: state(), "chess": state(peers: [])])
        #expect(digests(first).count == 1)
        #expect(schedule(first) == 1000 * ms)
        // Nothing due before the round.
        #expect(digests(replication.tick(now: 500 * ms, rooms: [room: state()])).isEmpty)
        // Over many rounds both peers are picked.
        var picked: Set<PeerAddress> = []
        for round in 1...20 { picked.formUnion(digests(replication.tick(now: Int64(round) * 1000 * ms, rooms: [room: state()]))) }
        #expect(picked == [bob.address, carol.address])
    }

    @Test func theSameSeedMakesTheSameChoices() {
        func run() -> [ReplicationDirective] {
            var replication = Replication(random: SplitMix64(seed: 99))
            return (0..<10).flatMap { replication.tick(now: Int64($0) * 1000 * ms, rooms: [room: state()]) }
        }
        #expect(run() == run())
    }

    @Test func aGapIsRepairedAtOnceThenRetriedUntilClosed() {
        var replication = Replication(random: SplitMix64(seed: 2))
        _ = replication.tick(now: 0, rooms: [room: state()])
        let now = 10 * ms
        let first = replication.received(room: room, from: bob.address, state: state(waiting: true), now: now)
        #expect(digests(first) == [bob.address])
        #expect(schedule(first) == now + 40 * ms)
        // More events arriving while the gap is open ask nothing more.
        #expect(replication.received(room: room, from: carol.address, state: state(waiting: true), now: now + ms).isEmpty)
        // Retries back off: 40, 80, 160, 320, then 500 ms.
        var at = now + 40 * ms
        for delay in [80, 160, 320, 500] as [Int64] {
            let retry = replication.tick(now: at, rooms: [room: state(waiting: true)])
            #expect(digests(retry).count == 1)
            #expect(schedule(retry) == min(at + delay * ms, 1000 * ms))  // or the next round, if earlier
            at += delay * ms
        }
        // The last delay repeats (this tick is also the anti-entropy round: two digests).
        let later = replication.tick(now: at, rooms: [room: state(waiting: true)])
        #expect(digests(later).count == 2)
        #expect(schedule(later) == at + 500 * ms)
        at += 500 * ms
        // Closed: when the next retry would have gone, only the anti-entropy round does.
        #expect(replication.received(room: room, from: bob.address, state: state(waiting: false), now: at).isEmpty)
        #expect(digests(replication.tick(now: at + 500 * ms, rooms: [room: state()])).count == 1)
    }

    @Test func aGapFromAPullIsRepairedOnTheTimer() {
        var replication = Replication(random: SplitMix64(seed: 3))
        _ = replication.tick(now: 0, rooms: [room: state()])
        let directives = replication.received(room: room, from: nil, state: state(waiting: true), now: 0)
        #expect(digests(directives).isEmpty)
        #expect(schedule(directives) == 40 * ms)
        #expect(digests(replication.tick(now: 40 * ms, rooms: [room: state(waiting: true)])).count == 1)
    }

    @Test func aPeerThatMissesEventsGetsThemPushedAtMostEvery20ms() {
        var replication = Replication(random: SplitMix64(seed: 4))
        let mine = vector((1, 5)), theirs = vector((1, 3))
        let push = ReplicationDirective.pushMissing(room: room, have: theirs, to: bob.address)
        #expect(replication.digestReceived(room: room, from: bob, remote: theirs, local: mine, now: 0) == [push])
        #expect(replication.digestReceived(room: room, from: bob, remote: theirs, local: mine, now: 10 * ms).isEmpty)
        #expect(replication.digestReceived(room: room, from: bob, remote: theirs, local: mine, now: 20 * ms) == [push])
        // Another peer is answered on its own clock.
        #expect(replication.digestReceived(room: room, from: carol, remote: theirs, local: mine, now: 21 * ms).count == 1)
    }

    @Test func equalVectorsNeedNothing() {
        var replication = Replication(random: SplitMix64(seed: 5))
        #expect(replication.digestReceived(room: room, from: bob, remote: vector((1, 5)), local: vector((1, 5)), now: 0).isEmpty)
    }

    @Test func missingAFewEventsAnswersAndKeepsAskingUntilTheyAreHere() {
        var replication = Replication(random: SplitMix64(seed: 6))
        _ = replication.tick(now: 0, rooms: [room: state()])
        let theirs = vector((2, 7)), mine = vector((2, 6))
        let answer = replication.digestReceived(room: room, from: bob, remote: theirs, local: mine, now: 0)
        #expect(digests(answer) == [bob.address])
        #expect(schedule(answer) == 40 * ms)
        // Not waiting on anything it can see, but bob showed seq 7: retried until it is here.
        #expect(digests(replication.tick(now: 40 * ms, rooms: [room: state(vector: mine)])).count == 1)
        _ = replication.received(room: room, from: bob.address, state: state(vector: theirs), now: 50 * ms)
        #expect(digests(replication.tick(now: 200 * ms, rooms: [room: state(vector: theirs)])).isEmpty)
    }

    @Test func missingMoreThanAPushCarriesIsPulledOnceAtATime() {
        var replication = Replication(random: SplitMix64(seed: 7))
        let theirs = vector((2, 500)), mine = vector((2, 10))
        let pull = ReplicationDirective.pull(room: room, peer: bob.id, from: bob.address)
        #expect(replication.digestReceived(room: room, from: bob, remote: theirs, local: mine, now: 0) == [pull])
        #expect(replication.digestReceived(room: room, from: bob, remote: theirs, local: mine, now: 5000 * ms).isEmpty)
        replication.pullFinished(room: room, peer: bob.id)
        #expect(replication.digestReceived(room: room, from: bob, remote: theirs, local: mine, now: 6000 * ms) == [pull])
    }

    @Test func bothSidesMissingSomethingPushAndAnswer() {
        var replication = Replication(random: SplitMix64(seed: 8))
        let theirs = vector((1, 3), (2, 9)), mine = vector((1, 5), (2, 8))
        let directives = replication.digestReceived(room: room, from: bob, remote: theirs, local: mine, now: 0)
        #expect(directives.contains(.pushMissing(room: room, have: theirs, to: bob.address)))
        #expect(digests(directives) == [bob.address])
    }

    @Test func aBurstEndsWithTwoRoundsOfTailDigests() {
        var replication = Replication(random: SplitMix64(seed: 9))
        _ = replication.tick(now: 0, rooms: [room: state()])
        #expect(schedule(replication.originated(room: room, now: 10 * ms)) == 110 * ms)
        // A later event postpones the tail.
        _ = replication.originated(room: room, now: 50 * ms)
        #expect(digests(replication.tick(now: 110 * ms, rooms: [room: state()])).isEmpty)
        let first = replication.tick(now: 150 * ms, rooms: [room: state()])
        #expect(Set(digests(first)) == [bob.address, carol.address])
        #expect(schedule(first) == 450 * ms)
        #expect(Set(digests(replication.tick(now: 450 * ms, rooms: [room: state()]))) == [bob.address, carol.address])
        #expect(digests(replication.tick(now: 900 * ms, rooms: [room: state()])).isEmpty)
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
        _ = replication.tick(now: 0, rooms: [room: state()])
        _ = replication.received(room: room, from: bob.address, state: state(waiting: true), now: 0)
        _ = replication.originated(room: room, now: 0)
        replication.left(room: room)
        #expect(digests(replication.tick(now: 500 * ms, rooms: [room: state(waiting: true)])).isEmpty)
    }
}
