import Testing

@testable import HuddleCore

/// A node whose input ended waits until a peer holds what it wrote, asks meanwhile, and gives up
/// at the deadline or at once when no peer can turn up.
@Suite(.offThePool) struct DeliveryWaitTests {
    let bob = ReplicationTests.peer(2)
    let carol = ReplicationTests.peer(3)

    @Test func itAsksLivePeersThenStopsOnceOneHoldsTheLastEventOfEveryRoom() {
        var wait = DeliveryWait(written: ["superbowl": 3, "nfl": 1], now: .epoch)
        let live = ["superbowl": [bob, carol], "nfl": [bob]]
        #expect(wait.poll(now: .epoch, livePeers: live, peersPossible: true) == .ask([
            .init(room: "nfl", peer: bob, seq: 1), .init(room: "superbowl", peer: bob, seq: 3),
            .init(room: "superbowl", peer: carol, seq: 3),
        ]))
        #expect(wait.poll(now: .epoch + .milliseconds(100), livePeers: live, peersPossible: true) == .wait, "asked again only after 500 ms")
        wait.heard(room: "superbowl", seq: 2, from: "n3")  // an older event: not enough
        wait.heard(room: "nfl", seq: 1, from: "n2")
        #expect(wait.missing == ["superbowl"])
        #expect(wait.poll(now: .epoch + .milliseconds(500), livePeers: live, peersPossible: true) == .ask([
            .init(room: "superbowl", peer: bob, seq: 3), .init(room: "superbowl", peer: carol, seq: 3),
        ]))
        wait.heard(room: "superbowl", seq: 4, from: "n3")
        #expect(wait.poll(now: .epoch + .milliseconds(600), livePeers: live, peersPossible: true) == .delivered(to: ["n2", "n3"]))
    }

    @Test func itGivesUpAtTheDeadline() {
        var wait = DeliveryWait(written: ["superbowl": 3], now: .epoch + .seconds(1))
        #expect(wait.poll(now: .epoch + .seconds(1), livePeers: [:], peersPossible: true) == .wait, "no live peer yet: nobody to ask")
        #expect(wait.poll(now: .epoch + .milliseconds(5_999), livePeers: [:], peersPossible: true) == .wait)
        #expect(wait.poll(now: .epoch + .seconds(6), livePeers: [:], peersPossible: true) == .giveUp(.timedOut))
    }

    @Test func withNoPeerToBeFoundItDoesNotWaitAtAll() {
        var wait = DeliveryWait(written: ["superbowl": 3], now: .epoch)
        #expect(wait.poll(now: .epoch, livePeers: [:], peersPossible: false) == .giveUp(.noPeers))
    }

    @Test func nothingWrittenIsDeliveredAtOnce() {
        var wait = DeliveryWait(written: ["superbowl": 0], now: .epoch)
        #expect(wait.poll(now: .epoch, livePeers: [:], peersPossible: false) == .delivered(to: []))
    }
}
