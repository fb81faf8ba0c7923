import HuddleCore
import Testing

@testable import HuddleNode

/// How a recording device's blocks are placed on the node's clock: what `--listen` calls "heard
/// at", and so the offsets it finds.
@Suite struct DeviceBlockStampsTests {
    /// 10 ms blocks at 16 kHz.
    var stamps = DeviceBlockStamps(sampleRate: 16_000)

    @Test mutating func theFirstBlockWasHeardItsLengthAndTheLatencyBeforeItArrived() {
        #expect(stamps.stamp(samples: 160, arrivedAt: .epoch + .seconds(1), latency: .milliseconds(20)) == .epoch + .milliseconds(970))
    }

    @Test mutating func laterBlocksFollowByCountWhateverTheSchedulingJitter() {
        _ = stamps.stamp(samples: 160, arrivedAt: .epoch + .seconds(1), latency: .zero)
        // Arrivals 7 ms, 13 ms and 40 ms apart: the samples are still 10 ms apart.
        #expect(stamps.stamp(samples: 160, arrivedAt: .epoch + .milliseconds(1_007), latency: .zero) == .epoch + .seconds(1))
        #expect(stamps.stamp(samples: 160, arrivedAt: .epoch + .milliseconds(1_020), latency: .zero) == .epoch + .milliseconds(1_010))
        #expect(stamps.stamp(samples: 160, arrivedAt: .epoch + .milliseconds(1_060), latency: .zero) == .epoch + .milliseconds(1_020))
    }

    @Test mutating func aStallStartsANewStretchAtTheBlocksArrival() {
        _ = stamps.stamp(samples: 160, arrivedAt: .epoch + .seconds(1), latency: .zero)
        // Nothing for two seconds (a monitor of a silent sink): the count would say 1 s.
        #expect(stamps.stamp(samples: 160, arrivedAt: .epoch + .milliseconds(3_010), latency: .zero) == .epoch + .seconds(3))
        #expect(stamps.stamp(samples: 160, arrivedAt: .epoch + .milliseconds(3_020), latency: .zero) == .epoch + .milliseconds(3_010))
    }

    @Test mutating func aLatencyOfMoreThanASecondIsNotBelieved() {
        #expect(stamps.stamp(samples: 160, arrivedAt: .epoch + .seconds(10), latency: .seconds(5)) == .epoch + .milliseconds(8_990))
    }
}
