/// What sound says about each calibrated node, for people: which offsets came from sound and
/// how sure the matches behind them are (``Calibration/Placement/sound``).
extension CalibrationSolver {
    /// Per node of `component`, the heard marks of its latest piece, summed up; nodes whose
    /// latest piece holds none are absent.
    static func soundEvidence(in component: Component) -> [NodeID: Calibration.Placement.Sound] {
        var evidence: [NodeID: Calibration.Placement.Sound] = [:]
        for mark in component.marks {
            guard let match = mark.match else { continue }
            let steps = component.steps[mark.node] ?? []
            guard component.piece(of: mark) == steps.count else { continue }
            let found = Calibration.Placement.Sound(
                matches: 1, confidence: match.confidence, sigma: match.sigma,
                stepHeard: steps.last.map { step in
                    component.marks.contains { $0.node == mark.node && $0.time == step && $0.isHeard }
                } ?? false)
            evidence[mark.node] = evidence[mark.node].map { $0.adding(found) } ?? found
        }
        return evidence
    }
}

extension Calibration.Placement.Sound {
    /// Both summaries together: matches counted, the best confidence, the smallest σ.
    func adding(_ other: Self) -> Self {
        Self(
            matches: matches + other.matches, confidence: max(confidence, other.confidence),
            sigma: min(sigma, other.sigma), stepHeard: stepHeard || other.stepHeard)
    }
}
