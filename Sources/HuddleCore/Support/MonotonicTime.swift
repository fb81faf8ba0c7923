/// A moment on the monotonic clock: the clock membership timers, round trips and every other
/// local deadline run on, which no wall-clock step moves. Microseconds since the clock's
/// arbitrary ``start`` inside (the boot of the machine, or a test's or the simulator's
/// beginning); a reading means nothing to another node, except echoed back to the node that
/// made it (a probe's send time).
///
/// Moments on this clock and on the ``WallTime`` clock never mix: the only way between them is
/// a ``NodeTime``, which reads both at once. Arithmetic saturates, as ``TimeSpan``'s does.
///
/// ```swift
/// let sent = MonotonicTime.start + .milliseconds(5)
/// let answered = sent + .microseconds(420)
/// answered - sent                     // 420 µs: a round trip
/// ```
public struct MonotonicTime: Sendable, Hashable, Comparable {
    /// Microseconds since the clock's start.
    public let microseconds: Int64

    public init(microseconds: Int64) {
        self.microseconds = microseconds
    }

    /// The clock's start. Not called `zero`, so that `.zero + span` can only be a span.
    public static let start = MonotonicTime(microseconds: 0)
    /// Earlier than any moment the clock reads: "never", for what is due at once.
    public static let distantPast = MonotonicTime(microseconds: .min)
    /// Later than any moment the clock reads: "not until something changes".
    public static let distantFuture = MonotonicTime(microseconds: .max)

    /// How long after the clock's start this is.
    public var sinceStart: TimeSpan { .microseconds(microseconds) }

    public static func < (a: MonotonicTime, b: MonotonicTime) -> Bool { a.microseconds < b.microseconds }

    public static func + (moment: MonotonicTime, span: TimeSpan) -> MonotonicTime {
        MonotonicTime(microseconds: moment.microseconds.clampedAdding(span.microseconds))
    }

    public static func + (span: TimeSpan, moment: MonotonicTime) -> MonotonicTime { moment + span }

    public static func - (moment: MonotonicTime, span: TimeSpan) -> MonotonicTime {
        MonotonicTime(microseconds: moment.microseconds.clampedSubtracting(span.microseconds))
    }

    /// How long after `b` `a` is (negative if before).
    public static func - (a: MonotonicTime, b: MonotonicTime) -> TimeSpan {
        .microseconds(a.microseconds.clampedSubtracting(b.microseconds))
    }

    public static func += (moment: inout MonotonicTime, span: TimeSpan) { moment = moment + span }
    public static func -= (moment: inout MonotonicTime, span: TimeSpan) { moment = moment - span }
}

extension MonotonicTime: CustomStringConvertible {
    /// The moment in µs since the clock's start, as test failures print it: `monotonic 420 µs`.
    public var description: String { "monotonic \(microseconds) µs" }
}
