import Testing

@testable import HuddleCore

@Suite(.offThePool) struct LinkDelayTests {
    let start = MonotonicTime.start + .seconds(100)

    @Test func oneWayIsHalfTheMedianRoundTrip() {
        var link = LinkDelay()
        #expect(link.oneWay == .zero)
        for (index, ms) in [10, 12, 400, 11, 9].enumerated() {
            let sent = start + .seconds(index)
            let id = link.ping(now: sent)
            link.pong(id, now: sent + .milliseconds(ms))
        }
        // Median of 9, 10, 11, 12, 400 is 11: the one slow answer does not count.
        #expect(link.oneWay == .microseconds(5_500))
    }

    @Test func onlyTheLastRoundTripsCount() {
        var link = LinkDelay()
        for index in 0..<LinkDelay.keptRoundTrips {
            let id = link.ping(now: start + .seconds(index))
            link.pong(id, now: start + .seconds(index) + .milliseconds(100))
        }
        for index in 0..<LinkDelay.keptRoundTrips {
            let sent = start + .seconds(100 + index)
            let id = link.ping(now: sent)
            link.pong(id, now: sent + .milliseconds(20))
        }
        #expect(link.oneWay == .milliseconds(10))
    }

    @Test func aPongForNoPingOrAForgottenOneCountsForNothing() {
        var link = LinkDelay()
        link.pong(7, now: start)
        #expect(link.oneWay == .zero)
        let first = link.ping(now: start)
        for index in 1...LinkDelay.outstandingPings { _ = link.ping(now: start + .milliseconds(index)) }
        link.pong(first, now: start + .seconds(5))  // the oldest was forgotten
        #expect(link.oneWay == .zero)
        link.pong(first + 1, now: start + .milliseconds(1) + .milliseconds(30))
        #expect(link.oneWay == .milliseconds(15))
        link.pong(first + 1, now: start + .seconds(9))  // answered already
        #expect(link.oneWay == .milliseconds(15))
    }
}
