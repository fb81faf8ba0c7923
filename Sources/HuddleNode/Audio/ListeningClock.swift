import Foundation
public import HuddleCore

/// The clock a source paces itself by and stamps blocks with: the node's wall clock (the clock of
/// marks and of events' `createdAt`), to the microsecond. Tests pass one that never sleeps.
public protocol ListeningClock: Sendable {
    /// Now, to the microsecond.
    func wall() -> WallTime
    /// Returns once ``wall()`` has reached `deadline` (at once if it has).
    func sleep(until deadline: WallTime)
}

/// The operating system's `CLOCK_REALTIME`, the clock `SystemClock.wall()` reads (to the µs here).
public struct SystemListeningClock: ListeningClock {
    public init() {}

    public func wall() -> WallTime {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return WallTime(microsecondsSinceEpoch: Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000)
    }

    public func sleep(until deadline: WallTime) {
        // Woken early (a signal), it sleeps again until the deadline.
        while case let left = deadline - wall(), left > .zero {
            usleep(UInt32(min(left, .seconds(1)).microseconds))
        }
    }
}
