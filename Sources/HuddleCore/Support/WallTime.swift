/// A moment on the wall clock: the clock events and marks are stamped with, which peers compare
/// (a mark is "the moment was on my screen when my wall clock read t"). Microseconds since the
/// Unix epoch inside; the wire and the JSON output speak milliseconds
/// (``millisecondsSinceEpoch``).
///
/// Moments on the wall clock and on the ``MonotonicTime`` clock never mix: the only way between
/// them is a ``NodeTime``, which reads both at once. Arithmetic saturates, as ``TimeSpan``'s does.
///
/// ```swift
/// let kickoff = WallTime.milliseconds(sinceEpoch: 1_700_000_000_000)
/// let shownAt = kickoff + .seconds(12)
/// (shownAt - kickoff).milliseconds      // 12_000
/// ```
public struct WallTime: Sendable, Hashable, Comparable {
    /// Microseconds since 1970-01-01 00:00 UTC.
    public let microsecondsSinceEpoch: Int64

    public init(microsecondsSinceEpoch: Int64) {
        self.microsecondsSinceEpoch = microsecondsSinceEpoch
    }

    /// The moment `milliseconds` after the epoch (as the wire and the store carry it),
    /// saturating past ±292 000 years.
    public static func milliseconds(sinceEpoch milliseconds: Int64) -> WallTime {
        WallTime(microsecondsSinceEpoch: milliseconds.clampedMultiplied(by: 1000))
    }

    /// 1970-01-01 00:00 UTC.
    public static let epoch = WallTime(microsecondsSinceEpoch: 0)
    /// Earlier than any moment a clock reads: "never", for what is due at once.
    public static let distantPast = WallTime(microsecondsSinceEpoch: .min)
    /// Later than any moment a clock reads: "not until something changes".
    public static let distantFuture = WallTime(microsecondsSinceEpoch: .max)

    /// Milliseconds since the epoch, rounded down (toward the past, as a clock that reads ms
    /// does, before the epoch too): what the wire, the store and the JSON output carry.
    public var millisecondsSinceEpoch: Int64 { microsecondsSinceEpoch.flooredDivision(by: 1000) }

    /// This moment rounded down to the millisecond: what survives a trip through the wire.
    public var wholeMilliseconds: WallTime { .milliseconds(sinceEpoch: millisecondsSinceEpoch) }

    public static func < (a: WallTime, b: WallTime) -> Bool { a.microsecondsSinceEpoch < b.microsecondsSinceEpoch }

    public static func + (moment: WallTime, span: TimeSpan) -> WallTime {
        WallTime(microsecondsSinceEpoch: moment.microsecondsSinceEpoch.clampedAdding(span.microseconds))
    }

    public static func + (span: TimeSpan, moment: WallTime) -> WallTime { moment + span }

    public static func - (moment: WallTime, span: TimeSpan) -> WallTime {
        WallTime(microsecondsSinceEpoch: moment.microsecondsSinceEpoch.clampedSubtracting(span.microseconds))
    }

    /// How long after `b` `a` is (negative if before).
    public static func - (a: WallTime, b: WallTime) -> TimeSpan {
        .microseconds(a.microsecondsSinceEpoch.clampedSubtracting(b.microsecondsSinceEpoch))
    }

    public static func += (moment: inout WallTime, span: TimeSpan) { moment = moment + span }
    public static func -= (moment: inout WallTime, span: TimeSpan) { moment = moment - span }
}

extension WallTime: CustomStringConvertible {
    /// The moment in µs since the epoch, as test failures print it: `wall 1700000000000000 µs`.
    public var description: String { "wall \(microsecondsSinceEpoch) µs" }
}
