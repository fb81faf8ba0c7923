import Testing

@testable import HuddleCore

/// A node that stops on purpose says goodbye: its peers take it as left at once, never suspect
/// it, and a goodbye replayed after it starts again changes nothing.
@Suite(.offThePool) struct MembershipLeavingTests {
    let alice = NodeID.fixture(1)
    let bob = NodeID.fixture(2)
    let bobAt = PeerAddress(host: "192.0.2.12", port: 7002)
    let second = TimeSpan.seconds(1)

    /// alice, who has heard bob's probe at incarnation `incarnation`.
    func aliceKnowingBob(incarnation: UInt64 = 5) -> Membership {
        var membership = Membership(me: alice, nick: "alice", port: 7001, incarnation: 1)
        membership.rooms = ["superbowl"]
        let probe = Probe(
            from: bob, nick: "bob", incarnation: incarnation, sequence: 1, sentAt: .start, port: 7002, rooms: ["superbowl"],
            peers: [])
        _ = membership.receive(probe, from: bobAt, now: .start)
        return membership
    }

    @Test func aGoodbyeMakesThePeerLeftAtOnceAndNeverSuspected() {
        var membership = aliceKnowingBob()
        #expect(membership.peers[bob]?.state == .alive)
        let said = membership.receive(Leaving(from: bob, incarnation: 5), now: .start + second)
        #expect(said == [.peerLeft(id: bob, nick: "bob")])
        #expect(membership.peers[bob]?.state == .gone)
        // Time passes: nothing more is said of bob (no suspicion, no second "gone").
        var later: [MembershipDirective] = []
        for tick in 2...30 { later += membership.tick(now: .start + Int64(tick) * second) }
        #expect(!later.contains { if case .peerChanged(bob, _, _, _) = $0 { true } else { false } })
        // A second copy changes nothing.
        #expect(membership.receive(Leaving(from: bob, incarnation: 5), now: .start + 31 * second).isEmpty)
    }

    @Test func aGoodbyeFromAnEarlierRunChangesNothing() {
        // bob restarted (incarnation 9); a goodbye of his incarnation 5 is replayed.
        var membership = aliceKnowingBob(incarnation: 9)
        #expect(membership.receive(Leaving(from: bob, incarnation: 5), now: .start + second).isEmpty)
        #expect(membership.peers[bob]?.state == .alive)
    }

    @Test func aPeerThatLeftAndComesBackIsHereAgain() {
        var membership = aliceKnowingBob()
        _ = membership.receive(Leaving(from: bob, incarnation: 5), now: .start + second)
        let probe = Probe(
            from: bob, nick: "bob", incarnation: 6, sequence: 2, sentAt: .start, port: 7002, rooms: ["superbowl"], peers: [])
        let back = membership.receive(probe, from: bobAt, now: .start + 2 * second)
        #expect(back.contains(.peerChanged(id: bob, nick: "bob", from: .gone, to: .alive)))
    }
}
