import Foundation

/// The node's two clocks: the wall clock that stamps events and hold-back times (ms since the
/// Unix epoch, as peers compare marks on it) and a monotonic clock for membership timers and
/// round-trip times (µs, immune to wall-clock steps).
///
/// A running node reads ``SystemClock``; a test hands the actor a clock it moves itself.
protocol NodeClock: Sendable {
    /// Wall clock, ms since the Unix epoch.
    func wallMillis() -> Int64
    /// Monotonic clock, µs since an arbitrary start.
    func monotonicMicros() -> Int64
}

/// The operating system's clocks: `CLOCK_REALTIME` and `CLOCK_MONOTONIC`.
struct SystemClock: NodeClock {
    func wallMillis() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    func monotonicMicros() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
    }
}
