/// Saturating arithmetic on the `Int64`s time is kept in (``TimeSpan``, ``WallTime``,
/// ``MonotonicTime``), and the roundings their conversions share.
extension Int64 {
    /// `self + other`, clamped to the representable range instead of trapping: times and
    /// offsets come from other nodes and must never crash this one.
    func clampedAdding(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }

    /// `self − other`, clamped to the representable range instead of trapping.
    func clampedSubtracting(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other < 0 ? .max : .min) : difference
    }

    /// `self × factor`, saturating at the bounds instead of trapping.
    func clampedMultiplied(by factor: Int64) -> Int64 {
        let (product, overflow) = multipliedReportingOverflow(by: factor)
        guard overflow else { return product }
        return (self < 0) == (factor < 0) ? .max : .min
    }

    /// The nearest integer to `value` (halves away from zero), or the nearest bound when it lies
    /// beyond one. `value` must not be NaN.
    init(saturating value: Double) {
        precondition(!value.isNaN, "a time that is not a number")
        let rounded = value.rounded()
        // 2⁶³ is exactly representable; every Double below it converts without trapping.
        if rounded >= 9_223_372_036_854_775_808.0 {
            self = .max
        } else if rounded < -9_223_372_036_854_775_808.0 {
            self = .min
        } else {
            self = Int64(rounded)
        }
    }

    /// `self / divisor` rounded toward negative infinity (a positive `divisor`).
    public func flooredDivision(by divisor: Int64) -> Int64 {
        let (quotient, remainder) = quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? quotient - 1 : quotient
    }
}
