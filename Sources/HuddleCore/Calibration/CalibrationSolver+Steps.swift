/// Steps in a node's lag: a stream that rebuffers and falls further behind, or an app that jumps
/// back toward live. A node's lag is then piecewise constant, and averaging its marks from before
/// and after the change would hold every message for a lag that is neither.
///
/// The rule, applied to each connected group after the plain fit:
///
/// 1. For every node and every mark of it on a label someone else marked too, its *residual*:
///    how much later than the others it saw that moment, beyond its fitted offset,
///    `r(u, e) = t(u, e) − offset(u) − mean over the others v of (t(v, e) − offset(v))`.
/// 2. Within each piece of a node's lag (at first, all of its marks; the reference's only in a
///    group of three or more, where the stream that moved disagrees with every other and so
///    scores highest; between two the other one steps), in the order of the
///    marks' times, every split into an earlier run of at least one residual and a later run of
///    at least two is a candidate: a single mark that disagrees is a suspect, set aside until a
///    second mark confirms the step (`CalibrationSolver+Suspects`; suspects are looked for
///    before steps, after every fit). Its size is the difference `d` of the two runs' mean
///    residuals; its score is `|d| · √(n₁·n₂ / n)`, the usual single change-point statistic,
///    which prefers a split into runs that each hold several marks over one that cuts off a
///    single early mark.
/// 3. The best candidate of the whole group with `|d|` over ``stepThreshold`` (1.5 s: far beyond
///    the ~200 ms of human reaction noise, well under a rebuffer) becomes a step at the time of
///    the later run's first mark; ties go to the lower node id, then the earlier time. The group
///    is fitted again with each piece as an unknown of its own, and step 2 repeats until no
///    candidate is left (at most once per mark).
/// 3a. **Sound.** Means and scores are weighted (``CalibrationSolver/Mark/weight``: a tap 1, a
///    heard mark far more), so that they follow the sound where there is sound: the size is the
///    difference of the two runs' weighted means, the score `|d| · √(W₁·W₂ / W)` with W the sums
///    of weights (with taps alone, the rule above exactly). A later run may be a single mark when
///    that mark is heard: a match is no stray key, so one that differs is a rebuffer. Between two
///    heard marks the threshold is ``heardStepThreshold`` (0.5 s): matches are good to a few
///    milliseconds, so a smaller change than a thumb could show is still real.
/// 4. A node's offset is that of its latest piece, with the delay nudges made since its first
///    mark (its marks are fitted less the nudges before them, so a pause is not a step).
///    Earlier pieces still give the offsets of their own time (``Calibration/Placement/timeline``):
///    a message written before the step keeps its game moment.
///
/// The rule reads only the set of counted marks, in sorted orders, so it gives the same steps for
/// every arrival order. A tree of marks fits exactly (every residual is 0), so it never steps,
/// and the worked example is unchanged; so is any fit whose marks agree to within the threshold.
///
/// Example: the reference R and node U mark moments 1–8; U's stream is 5 s behind R's for
/// moments 1–4 and, after a rebuffer, 8 s behind for 5–8. The plain fit says 6.5 s, with
/// residuals of about −1.5 s then +1.5 s. The best split is between moments 4 and 5 (`d` = 3 s),
/// so U gets a step at its mark of moment 5 and an offset of 8 s, fitted from moments 5–8.
extension CalibrationSolver {
    /// The smallest difference between the mean residuals before and after a split that counts
    /// as a step.
    public static let stepThreshold = TimeSpan.milliseconds(1_500)

    /// The smallest change between heard matches on both sides of a split that counts as a step:
    /// a rebuffer of half a second, which a thumb could not tell from its own noise.
    public static let heardStepThreshold = TimeSpan.milliseconds(500)

    /// The components of `marks` with the steps and the suspect marks they show, each with its
    /// fit: one least-squares solve per step found, plus one; a suspect mark set aside starts
    /// its component over without it (see `CalibrationSolver+Suspects`). `suspects` gathers
    /// the marks set aside.
    static func settle(_ marks: [Mark], suspects: inout [Mark]) -> [(Component, fit: [Piece: Double])] {
        var settled: [(Component, fit: [Piece: Double])] = []
        for unsplit in components(of: marks) {
            var component = unsplit
            var pieces = fit(component)
            var setAside: Mark?
            for _ in 0..<component.marks.count {
                if let suspect = worstSuspect(in: component, fit: pieces) {
                    setAside = suspect
                    break
                }
                guard let step = bestStep(in: component, fit: pieces) else { break }
                component.steps[step.node, default: []].append(step.time)
                component.steps[step.node]!.sort()
                pieces = fit(component)
            }
            if let setAside {
                suspects.append(setAside)
                settled += settle(component.marks.filter { $0 != setAside }, suspects: &suspects)
            } else {
                settled.append((component, pieces))
            }
        }
        return settled
    }

    /// A step found in a node's lag: it starts a new piece at `time`.
    struct Step {
        var node: NodeID
        var time: WallTime
        var score: Double
    }

    /// One mark's residual in a fit: how much later than the others its node saw the moment,
    /// beyond its fitted offset, in ms (the fit's unit).
    struct Residual {
        var mark: Mark
        var value: Double
    }

    /// Per piece of a node's lag, the residuals of its marks on labels someone else marked too,
    /// in the order of the marks' times (then labels).
    static func residuals(in component: Component, fit: [Piece: Double]) -> [Piece: [Residual]] {
        // Per label, the marks with their fitted game time t − offset.
        var byLabel: [Moment: [(mark: Mark, game: Double)]] = [:]
        for mark in component.marks {
            guard let offset = fit[Piece(node: mark.node, index: component.piece(of: mark))] else { continue }
            byLabel[mark.label, default: []].append((mark, Double(mark.fitted.millisecondsSinceEpoch) - offset))
        }
        var residuals: [Piece: [Residual]] = [:]
        for (_, marks) in byLabel where marks.count >= 2 {
            let total = marks.reduce(0.0) { $0 + $1.game }
            for (mark, game) in marks {
                let others = (total - game) / Double(marks.count - 1)
                residuals[Piece(node: mark.node, index: component.piece(of: mark)), default: []]
                    .append(Residual(mark: mark, value: game - others))
            }
        }
        for piece in residuals.keys {
            residuals[piece]!.sort { ($0.mark.time, $0.mark.label) < ($1.mark.time, $1.mark.label) }
        }
        return residuals
    }

    /// The best step the residuals of `fit` show, if any is over the threshold. The later run
    /// holds at least two marks: one mark alone is a suspect, not a step, until another
    /// confirms it.
    static func bestStep(in component: Component, fit: [Piece: Double]) -> Step? {
        let residuals = residuals(in: component, fit: fit)
        var best: Step?
        // The reference's stream is the group's yardstick. Between two streams a step cannot tell
        // which one moved, and the other one steps. With three or more, the stream that moved
        // disagrees with all the others and the rest only with it, so its split scores highest,
        // and the reference may step too; it is looked at last, so a tie goes to the other one.
        let nodes = Set(component.marks.map(\.node))
        let order = residuals.keys.sorted { ($0.node == component.reference ? 1 : 0, $0) < ($1.node == component.reference ? 1 : 0, $1) }
        for piece in order where piece.node != component.reference || nodes.count >= 3 {
            let run = residuals[piece]!
            guard run.count >= 2 else { continue }
            // With taps alone every weight is 1, and these are the plain counts and sums.
            let n = run.reduce(0.0) { $0 + $1.mark.weight }
            let total = run.reduce(0.0) { $0 + $1.mark.weight * $1.value }
            var before = 0.0
            var n1 = 0.0
            for k in 1..<run.count {
                before += run[k - 1].mark.weight * run[k - 1].value
                n1 += run[k - 1].mark.weight
                // One mark after the split is a suspect, unless it is heard (see 3a).
                guard run.count - k >= 2 || run[k].mark.isHeard else { continue }
                let n2 = n - n1
                let difference = (total - before) / n2 - before / n1
                let threshold = (run[k].mark.isHeard && run[k - 1].mark.isHeard ? heardStepThreshold : stepThreshold)
                    .fractionalMilliseconds
                guard abs(difference) > threshold, run[k].mark.time > run[k - 1].mark.time else { continue }
                let score = abs(difference) * (n1 * n2 / n).squareRoot()
                if best.map({ score > $0.score }) ?? true {
                    best = Step(node: piece.node, time: run[k].mark.time, score: score)
                }
            }
        }
        return best
    }
}
