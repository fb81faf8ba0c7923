import Testing

@testable import HuddleCore

/// When a listening node turns an aligned match into a `heard` event: the first at once, then
/// only what changed, a refresh now and then, never a flood.
@Suite(.offThePool) struct HeardPublishingTests {
    let bob = NodeID.fixture(2)
    let carol = NodeID.fixture(3)

    func match(_ peer: NodeID, lag: TimeSpan, confidence: Double = 60) -> HeardMatch {
        HeardMatch(peer: peer, at: .epoch, lag: lag, confidence: confidence)
    }

    @Test func theFirstMatchGoesOutThenOnlyAChangeOrARefresh() {
        var publishing = HeardPublishing()
        let published = [
            publishing.shouldPublish(match(bob, lag: .milliseconds(3_200)), now: .epoch),  // the first
            publishing.shouldPublish(match(bob, lag: .milliseconds(3_210)), now: .epoch + .seconds(30)),  // 10 ms: the same lag
            publishing.shouldPublish(match(bob, lag: .milliseconds(5_200)), now: .epoch + .seconds(60)),  // a rebuffer
            publishing.shouldPublish(match(bob, lag: .milliseconds(5_201)), now: .epoch + .seconds(90)),
            publishing.shouldPublish(match(bob, lag: .milliseconds(5_201)), now: .epoch + .seconds(360)),  // refreshed after 5 min
            publishing.shouldPublish(match(carol, lag: .seconds(-1)), now: .epoch + .seconds(360)),  // each peer on its own
        ]
        #expect(published == [true, false, true, false, true, true])
    }

    @Test func neverMoreOftenThanTwentyFiveSecondsAPeerNorAWeakMatch() {
        var publishing = HeardPublishing()
        let published = [
            publishing.shouldPublish(match(bob, lag: .milliseconds(3_200), confidence: 8.9), now: .epoch),
            // Counts anywhere (≥ 9), but this node publishes only what is surely its own screen.
            publishing.shouldPublish(match(bob, lag: .milliseconds(3_200), confidence: 9.3), now: .epoch),
            publishing.shouldPublish(match(bob, lag: .milliseconds(3_200)), now: .epoch),
            publishing.shouldPublish(match(bob, lag: .seconds(9)), now: .epoch + .seconds(10)),
            publishing.shouldPublish(match(bob, lag: .seconds(9)), now: .epoch + .seconds(25)),
        ]
        #expect(published == [false, false, true, false, true])
    }

    @Test func aPeersJoinStartsItOver() {
        var publishing = HeardPublishing()
        let first = publishing.shouldPublish(match(bob, lag: .milliseconds(3_200)), now: .epoch)
        publishing.peerJoined(bob)
        let again = publishing.shouldPublish(match(bob, lag: .milliseconds(3_200)), now: .epoch + .seconds(1))
        #expect(first && again)
    }
}
