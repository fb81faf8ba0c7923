import Testing

@testable import HuddleCore

/// When a listening node turns an aligned match into a `heard` event: the first at once, then
/// only what changed, a refresh now and then, never a flood.
@Suite struct HeardPublishingTests {
    let bob = NodeID.fixture(2)
    let carol = NodeID.fixture(3)

    func match(_ peer: NodeID, lag: Int64, confidence: Double = 60) -> HeardMatch {
        HeardMatch(peer: peer, at: 0, lagMicros: lag, confidence: confidence)
    }

    @Test func theFirstMatchGoesOutThenOnlyAChangeOrARefresh() {
        var publishing = HeardPublishing()
        let published = [
            publishing.shouldPublish(match(bob, lag: 3_200_000), now: 0),  // the first
            publishing.shouldPublish(match(bob, lag: 3_210_000), now: 30_000),  // 10 ms: the same lag
            publishing.shouldPublish(match(bob, lag: 5_200_000), now: 60_000),  // a rebuffer
            publishing.shouldPublish(match(bob, lag: 5_201_000), now: 90_000),
            publishing.shouldPublish(match(bob, lag: 5_201_000), now: 360_000),  // refreshed after 5 min
            publishing.shouldPublish(match(carol, lag: -1_000_000), now: 360_000),  // each peer on its own
        ]
        #expect(published == [true, false, true, false, true, true])
    }

    @Test func neverMoreOftenThanTwentyFiveSecondsAPeerNorAWeakMatch() {
        var publishing = HeardPublishing()
        let published = [
            publishing.shouldPublish(match(bob, lag: 3_200_000, confidence: 8.9), now: 0),
            // Counts anywhere (≥ 9), but this node publishes only what is surely its own screen.
            publishing.shouldPublish(match(bob, lag: 3_200_000, confidence: 9.3), now: 0),
            publishing.shouldPublish(match(bob, lag: 3_200_000), now: 0),
            publishing.shouldPublish(match(bob, lag: 9_000_000), now: 10_000),
            publishing.shouldPublish(match(bob, lag: 9_000_000), now: 25_000),
        ]
        #expect(published == [false, false, true, false, true])
    }

    @Test func aPeersJoinStartsItOver() {
        var publishing = HeardPublishing()
        let first = publishing.shouldPublish(match(bob, lag: 3_200_000), now: 0)
        publishing.peerJoined(bob)
        let again = publishing.shouldPublish(match(bob, lag: 3_200_000), now: 1_000)
        #expect(first && again)
    }
}
