import Foundation
import HuddleCore

/// The node's two clocks: the wall clock that stamps events and hold-back times (as peers compare
/// marks on it) and a monotonic clock for membership timers and round-trip times (immune to
/// wall-clock steps).
///
/// A running node reads ``SystemClock``; a test hands the actor a clock it moves itself.
protocol NodeClock: Sendable {
    /// The wall clock, to the millisecond, rounded down: the wire stamps events in whole ms, so
    /// what this node stamps is exactly what its peers read.
    func wall() -> WallTime
    /// The monotonic clock, to the microsecond.
    func monotonic() -> MonotonicTime
}

/// The operating system's clocks: `CLOCK_REALTIME` and `CLOCK_MONOTONIC`.
struct SystemClock: NodeClock {
    func wall() -> WallTime {
        Self.preciseWall().wholeMilliseconds
    }

    /// `CLOCK_REALTIME` to the microsecond, not rounded: when a line was printed
    /// (`shown_at_us`), a step of a traced message (``DeliveryTrace``).
    static func preciseWall() -> WallTime {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return WallTime(microsecondsSinceEpoch: Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000)
    }

    func monotonic() -> MonotonicTime {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return MonotonicTime(microseconds: Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000)
    }
}
