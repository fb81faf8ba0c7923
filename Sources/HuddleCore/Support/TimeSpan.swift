/// A signed length of time: how long something lasts, how far apart two moments are, an offset
/// between two viewers' streams. One unit inside, microseconds in an `Int64` (±292 000 years),
/// so a value never says which unit it was written in: `.milliseconds(40)` and
/// `.microseconds(40_000)` are the same span.
///
/// Arithmetic saturates at the bounds instead of trapping: spans are made from what other nodes
/// send (a mark's time, a probe's echo) and must never crash this one. There is no integer
/// literal form, on purpose: a bare number has no unit.
///
/// ```swift
/// let probeInterval = TimeSpan.seconds(1)
/// let timeout = probeInterval / 4                 // 250 ms
/// timeout.milliseconds                            // 250
/// TimeSpan.milliseconds(3_200) > .seconds(3)      // true
/// ```
public struct TimeSpan: Sendable, Hashable, Comparable {
    /// The span in microseconds.
    public let microseconds: Int64

    private init(exactly microseconds: Int64) {
        self.microseconds = microseconds
    }

    /// No time at all.
    public static let zero = TimeSpan(exactly: 0)
    /// The longest span there is (what saturating arithmetic stops at).
    public static let max = TimeSpan(exactly: .max)
    /// The most negative span there is.
    public static let min = TimeSpan(exactly: .min)

    public static func microseconds(_ value: some BinaryInteger) -> TimeSpan {
        TimeSpan(exactly: Int64(clamping: value))
    }

    /// `value` ms, saturating past ±292 000 years.
    public static func milliseconds(_ value: some BinaryInteger) -> TimeSpan {
        TimeSpan(exactly: Int64(clamping: value).clampedMultiplied(by: 1000))
    }

    /// `value` s, saturating past ±292 000 years.
    public static func seconds(_ value: some BinaryInteger) -> TimeSpan {
        TimeSpan(exactly: Int64(clamping: value).clampedMultiplied(by: 1_000_000))
    }

    /// `value` ms, to the nearest microsecond (halves away from zero), saturating.
    public static func milliseconds(_ value: Double) -> TimeSpan {
        TimeSpan(exactly: Int64(saturating: value * 1000))
    }

    /// `value` s, to the nearest microsecond (halves away from zero), saturating.
    public static func seconds(_ value: Double) -> TimeSpan {
        TimeSpan(exactly: Int64(saturating: value * 1_000_000))
    }

    /// `value` s, to a whole microsecond by `rule`, saturating: `.towardZero` is what
    /// `Int64(value * 1_000_000)` gives.
    public static func seconds(_ value: Double, rounded rule: FloatingPointRoundingRule) -> TimeSpan {
        TimeSpan(exactly: Int64(saturating: (value * 1_000_000).rounded(rule)))
    }

    /// The span in whole milliseconds, rounded down (toward the past, as a clock that reads ms
    /// does): 1 999 µs is 1 ms, −1 µs is −1 ms.
    public var milliseconds: Int64 { microseconds.flooredDivision(by: 1000) }

    /// The span in milliseconds with their fraction (`Double(microseconds) / 1000`), for output
    /// that speaks in ms.
    public var fractionalMilliseconds: Double { Double(microseconds) / 1000 }

    /// The span in seconds with their fraction.
    public var seconds: Double { Double(microseconds) / 1_000_000 }

    /// The span's length, whatever its sign (saturating: the magnitude of ``min`` is ``max``).
    public var magnitude: TimeSpan { microseconds < 0 ? -self : self }

    public static func < (a: TimeSpan, b: TimeSpan) -> Bool { a.microseconds < b.microseconds }

    public static func + (a: TimeSpan, b: TimeSpan) -> TimeSpan {
        TimeSpan(exactly: a.microseconds.clampedAdding(b.microseconds))
    }

    public static func - (a: TimeSpan, b: TimeSpan) -> TimeSpan {
        TimeSpan(exactly: a.microseconds.clampedSubtracting(b.microseconds))
    }

    public static prefix func - (span: TimeSpan) -> TimeSpan {
        TimeSpan(exactly: Int64(0).clampedSubtracting(span.microseconds))
    }

    public static func += (a: inout TimeSpan, b: TimeSpan) { a = a + b }
    public static func -= (a: inout TimeSpan, b: TimeSpan) { a = a - b }

    /// `factor` times as long, saturating.
    public static func * (span: TimeSpan, factor: Int64) -> TimeSpan {
        TimeSpan(exactly: span.microseconds.clampedMultiplied(by: factor))
    }

    public static func * (factor: Int64, span: TimeSpan) -> TimeSpan { span * factor }

    /// One `divisor`th of the span, rounded toward zero like integer division.
    public static func / (span: TimeSpan, divisor: Int64) -> TimeSpan {
        precondition(divisor != 0, "a span divided by zero")
        // Only .min / −1 overflows: it saturates like everything else.
        let (quotient, overflow) = span.microseconds.dividedReportingOverflow(by: divisor)
        return TimeSpan(exactly: overflow ? .max : quotient)
    }

    /// How many times `b` goes into `a`, with the fraction.
    public static func / (a: TimeSpan, b: TimeSpan) -> Double {
        Double(a.microseconds) / Double(b.microseconds)
    }
}

extension TimeSpan: CustomStringConvertible {
    /// The span in µs, as test failures print it: `1500000 µs`.
    public var description: String { "\(microseconds) µs" }
}
