/// The name of a calibration event ("kickoff", "first pitch"), normalised so that every node that
/// types it a little differently still marks the same event: surrounding whitespace (Unicode
/// whitespace and newlines included) is trimmed and letters are lowercased.
///
/// ```swift
/// CalibrationLabel.normalize("  KickOff ")                          // "kickoff"
/// CalibrationLabel("  KickOff ") == CalibrationLabel("kickoff")     // true
/// CalibrationLabel(" \t ")                                          // nil: nothing to name
/// ```
///
/// Two labels are the same iff their normalised strings are `==` (Swift compares strings by
/// canonical equivalence, so a precomposed "é" and "e" + combining accent are the same label).
/// Labels order by that string, which is what the solver's deterministic tie-breaks use.
public struct CalibrationLabel: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The trimmed, lowercased text; never empty.
    public let normalized: String

    /// Normalises `raw`; `nil` if nothing is left after trimming.
    public init?(_ raw: some StringProtocol) {
        let normalized = Self.normalize(raw)
        guard !normalized.isEmpty else { return nil }
        self.normalized = normalized
    }

    /// `raw` without leading or trailing whitespace, lowercased; `""` if it is all whitespace.
    public static func normalize(_ raw: some StringProtocol) -> String {
        raw.trimmingWhitespace().lowercased()
    }

    public var description: String { normalized }

    public static func < (lhs: CalibrationLabel, rhs: CalibrationLabel) -> Bool {
        lhs.normalized < rhs.normalized
    }
}
