import Testing

@testable import HuddleCore

/// A peer that leaves the table leaves nothing behind: everything kept about a peer lives in its
/// one entry (``PeerTable``), so no map of the membership can keep a departed one.
extension MembershipTests {
    @Test func aForgottenPeerLeavesNothingKeyedByItsIdAnywhereInTheMembership() throws {
        var membership = aliceNode(config: { var config = MembershipConfig(); config.maxPeers = 2; return config }())
        let second = TimeSpan.seconds(1)
        let bobMoved = PeerAddress(host: "192.0.2.99", port: 7002)
        let daveAt = PeerAddress(host: "192.0.2.14", port: 7004)

        // Bob gathers what is kept about a peer: contact and his newest probe, a check of another
        // address, a doubt and a rumour (carol says he is suspect while he talks to alice).
        _ = membership.receive(probe(from: bob), from: bobAt, now: .start)
        _ = membership.receive(probe(from: carol, nick: "carol", port: 7003), from: carolAt, now: .start)
        membership.proveAllForTest()
        _ = membership.receive(probe(from: bob), from: bobMoved, now: .start + .milliseconds(100))
        _ = membership.receive(
            probe(from: carol, nick: "carol", port: 7003, peers: [record(bob, "bob", at: bobAt, .suspect)]),
            from: carolAt, now: .start + .milliseconds(200))
        let kept = places(of: bob, in: membership)
        #expect(kept.contains("peers.entries[…]"), "the walk finds what it looks for: \(kept)")
        #expect(membership.peers.entries[bob]?.move != nil && membership.peers.entries[bob]?.lastProbe != nil)

        // Both fall silent and go; dave, who signs his own contact, takes bob's place (the gone
        // peer seen longest ago), and time moves on.
        _ = run(&membership, from: .start + second, to: .start + 60 * second)
        #expect(membership.peers.values.allSatisfy { $0.state == .gone })
        _ = membership.receive(probe(from: dave, nick: "dave", port: 7004), from: daveAt, now: .start + 61 * second)
        #expect(membership.peers[bob] == nil && membership.peers[dave] != nil)
        _ = run(&membership, from: .start + 61 * second, to: .start + 70 * second)

        #expect(places(of: bob, in: membership) == [])
        #expect(!places(of: carol, in: membership).isEmpty, "carol, still known, is found")
    }
}
