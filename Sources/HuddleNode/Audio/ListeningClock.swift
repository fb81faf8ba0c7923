import Foundation

/// The clock a source paces itself by and stamps blocks with: the node's wall clock (the clock of
/// marks and of events' `createdAt`), in microseconds. Tests pass one that never sleeps.
public protocol ListeningClock: Sendable {
    /// Microseconds since the Unix epoch.
    func wallMicros() -> Int64
    /// Returns once ``wallMicros()`` has reached `deadline` (at once if it has).
    func sleep(untilWallMicros deadline: Int64)
}

/// The operating system's `CLOCK_REALTIME`, the clock `SystemClock.wall()` reads (to the µs here).
public struct SystemListeningClock: ListeningClock {
    public init() {}

    public func wallMicros() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
    }

    public func sleep(untilWallMicros deadline: Int64) {
        // Woken early (a signal), it sleeps again until the deadline.
        while case let left = deadline - wallMicros(), left > 0 {
            usleep(UInt32(min(left, 1_000_000)))
        }
    }
}
