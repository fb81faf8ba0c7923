import Testing

@testable import HuddleCore

/// ``TimeSpan``, ``WallTime`` and ``MonotonicTime``: one unit inside, conversions at the edges,
/// saturating arithmetic.
@Suite(.offThePool) struct TimeTests {
    @Test("a span is the same whichever unit it was written in")
    func unitsAgree() {
        #expect(TimeSpan.seconds(3) == .milliseconds(3_000))
        #expect(TimeSpan.milliseconds(3_200) == .microseconds(3_200_000))
        #expect(TimeSpan.seconds(1.5) == .milliseconds(1_500))
        #expect(TimeSpan.milliseconds(0.4) == .microseconds(400))
        #expect(TimeSpan.milliseconds(Int64(-7)).microseconds == -7_000)
        #expect(TimeSpan.seconds(2).seconds == 2)
        #expect(TimeSpan.microseconds(2_310).fractionalMilliseconds == 2.31)
        #expect(TimeSpan.zero.microseconds == 0)
    }

    @Test("Doubles round to the nearest microsecond, halves away from zero")
    func doublesRound() {
        #expect(TimeSpan.milliseconds(0.0004) == .zero)
        #expect(TimeSpan.milliseconds(0.0005) == .microseconds(1))
        #expect(TimeSpan.milliseconds(-0.0005) == .microseconds(-1))
        #expect(TimeSpan.seconds(1e300) == .max)
        #expect(TimeSpan.seconds(-1e300) == .min)
    }

    @Test("whole milliseconds round down, before zero too", arguments: [
        (1_999, 1), (1_000, 1), (999, 0), (0, 0), (-1, -1), (-999, -1), (-1_000, -1), (-1_001, -2),
    ] as [(Int64, Int64)])
    func millisecondsRoundDown(microseconds: Int64, milliseconds: Int64) {
        #expect(TimeSpan.microseconds(microseconds).milliseconds == milliseconds)
        #expect(WallTime(microsecondsSinceEpoch: microseconds).millisecondsSinceEpoch == milliseconds)
        #expect(
            WallTime(microsecondsSinceEpoch: microseconds).wholeMilliseconds
                == .milliseconds(sinceEpoch: milliseconds))
    }

    @Test("arithmetic on spans")
    func spanArithmetic() {
        let second = TimeSpan.seconds(1)
        #expect(second + .milliseconds(500) == .milliseconds(1_500))
        #expect(second - .milliseconds(1_500) == .milliseconds(-500))
        #expect(-second == .seconds(-1))
        #expect(second * 3 == .seconds(3) && 3 * second == .seconds(3))
        #expect(second / 4 == .milliseconds(250))
        #expect(TimeSpan.microseconds(-7) / 2 == .microseconds(-3))  // toward zero, as Int64's /
        #expect(TimeSpan.seconds(3) / second == 3)
        #expect(TimeSpan.milliseconds(-5).magnitude == .milliseconds(5))
        var span = TimeSpan.zero
        span += second
        span -= .milliseconds(1)
        #expect(span == .milliseconds(999))
    }

    @Test("spans compare by length, negative ones first")
    func spansCompare() {
        let spans: [TimeSpan] = [.seconds(1), .milliseconds(-1), .zero, .microseconds(999_999), .min, .max]
        #expect(spans.sorted() == [.min, .milliseconds(-1), .zero, .microseconds(999_999), .seconds(1), .max])
        #expect(max(TimeSpan.seconds(2), .milliseconds(2_001)) == .milliseconds(2_001))
    }

    @Test("arithmetic saturates at the bounds instead of trapping")
    func saturates() {
        #expect(TimeSpan.max + .microseconds(1) == .max)
        #expect(TimeSpan.min - .microseconds(1) == .min)
        #expect(-TimeSpan.min == .max)
        #expect(TimeSpan.min.magnitude == .max)
        #expect(TimeSpan.seconds(1) * .max == .max && TimeSpan.seconds(-1) * .max == .min)
        #expect(TimeSpan.min / -1 == .max)
        #expect(TimeSpan.milliseconds(Int64.max) == .max && TimeSpan.seconds(Int64.min) == .min)
        #expect(WallTime.milliseconds(sinceEpoch: .max) == .distantFuture)
        #expect(WallTime.milliseconds(sinceEpoch: .min) == .distantPast)
        #expect(WallTime.distantFuture + .seconds(1) == .distantFuture)
        #expect(WallTime.distantFuture - WallTime.distantPast == .max)
        #expect(MonotonicTime.distantPast - .seconds(1) == .distantPast)
        #expect(MonotonicTime.distantPast - MonotonicTime.start == .min)
    }

    @Test("moments on the wall clock: spans between them, ms on the wire")
    func wallMoments() {
        let kickoff = WallTime.milliseconds(sinceEpoch: 1_700_000_000_000)
        #expect(kickoff.microsecondsSinceEpoch == 1_700_000_000_000_000)
        #expect(kickoff.millisecondsSinceEpoch == 1_700_000_000_000)
        let shown = kickoff + .seconds(12)
        #expect(shown - kickoff == .milliseconds(12_000))
        #expect(kickoff - shown == .seconds(-12))
        #expect(shown - .seconds(12) == kickoff)
        #expect(kickoff < shown && WallTime.distantPast < kickoff && shown < .distantFuture)
        #expect(WallTime.epoch + .milliseconds(1) == .milliseconds(sinceEpoch: 1))
        var moment = kickoff
        moment += .microseconds(1_500)
        #expect(moment.millisecondsSinceEpoch == 1_700_000_000_001)
        moment -= .microseconds(1_500)
        #expect(moment == kickoff)
    }

    @Test("moments on the monotonic clock")
    func monotonicMoments() {
        let sent = MonotonicTime.start + .milliseconds(5)
        let answered = sent + .microseconds(420)
        #expect(answered - sent == .microseconds(420))
        #expect(answered.microseconds == 5_420 && answered.sinceStart == .microseconds(5_420))
        #expect(sent < answered && answered - .microseconds(420) == sent)
        #expect([answered, .distantPast, sent, .distantFuture].sorted() == [.distantPast, sent, answered, .distantFuture])
    }

    @Test("a node's instant moves on both clocks at once")
    func nodeTimeAdvances() {
        let now = NodeTime(wall: .milliseconds(sinceEpoch: 10_000), monotonic: .start)
        let later = now.advanced(by: .milliseconds(250))
        #expect(later.wall == .milliseconds(sinceEpoch: 10_250))
        #expect(later.monotonic == .start + .microseconds(250_000))
    }

    @Test("descriptions name the unit")
    func descriptions() {
        #expect("\(TimeSpan.milliseconds(2))" == "2000 µs")
        #expect("\(WallTime.milliseconds(sinceEpoch: 3))" == "wall 3000 µs")
        #expect("\(MonotonicTime.start + .microseconds(4))" == "monotonic 4 µs")
    }
}
