import Testing

@testable import HuddleNode

/// How a recording device's blocks are placed on the node's clock: what `--listen` calls "heard
/// at", and so the offsets it finds.
@Suite struct DeviceBlockStampsTests {
    /// 10 ms blocks at 16 kHz.
    var stamps = DeviceBlockStamps(sampleRate: 16_000)

    @Test mutating func theFirstBlockWasHeardItsLengthAndTheLatencyBeforeItArrived() {
        #expect(stamps.stamp(samples: 160, arrivedAt: 1_000_000, latency: 20_000) == 970_000)
    }

    @Test mutating func laterBlocksFollowByCountWhateverTheSchedulingJitter() {
        _ = stamps.stamp(samples: 160, arrivedAt: 1_000_000, latency: 0)
        // Arrivals 7 ms, 13 ms and 40 ms apart: the samples are still 10 ms apart.
        #expect(stamps.stamp(samples: 160, arrivedAt: 1_007_000, latency: 0) == 1_000_000)
        #expect(stamps.stamp(samples: 160, arrivedAt: 1_020_000, latency: 0) == 1_010_000)
        #expect(stamps.stamp(samples: 160, arrivedAt: 1_060_000, latency: 0) == 1_020_000)
    }

    @Test mutating func aStallStartsANewStretchAtTheBlocksArrival() {
        _ = stamps.stamp(samples: 160, arrivedAt: 1_000_000, latency: 0)
        // Nothing for two seconds (a monitor of a silent sink): the count would say 1_000_000.
        #expect(stamps.stamp(samples: 160, arrivedAt: 3_010_000, latency: 0) == 3_000_000)
        #expect(stamps.stamp(samples: 160, arrivedAt: 3_020_000, latency: 0) == 3_010_000)
    }

    @Test mutating func aLatencyOfMoreThanASecondIsNotBelieved() {
        #expect(stamps.stamp(samples: 160, arrivedAt: 10_000_000, latency: 5_000_000) == 8_990_000)
    }
}
