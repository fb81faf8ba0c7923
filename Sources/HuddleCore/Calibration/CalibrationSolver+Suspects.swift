/// Suspect marks: one stray key (Ctrl-T pressed on the wrong moment, a mark of "first down" a
/// minute and a half before it happened) must not move anyone's offset. A mark that disagrees
/// with the rest of its node's marks is set aside, and counts again only once another mark
/// confirms it, which then makes it a step (see `CalibrationSolver+Steps`).
///
/// The rule, on each fit (before steps are looked for):
///
/// 1. Each node's marks on labels someone else marked too, in the order of their times, with
///    their residuals (see ``CalibrationSolver/residuals(in:fit:)``).
/// 2. A mark is *suspect* when its residual differs from the previous mark's by more than
///    ``CalibrationSolver/stepThreshold`` and, unless it is the node's last, from the next
///    mark's too: it agrees with neither neighbour. A node's first mark is never suspect (it is
///    what the others are measured against), and a real step is not either once a second mark
///    after it agrees with the first.
/// 2a. **Sound outvotes thumbs.** A heard mark (one side of a ``HeardMatch``) is never suspect.
///    A tap of a node that has heard marks is suspect also when it differs by more than the
///    threshold from the nearest heard mark before it *and* the nearest after it (a stray key
///    between stretches of sound, whatever taps surround it), and its node's first mark is not
///    exempt: a tap before all the sound that disagrees with the next mark is set aside, not taken
///    as the lag the sound then "steps" from. Two taps that agree after the last sound still make
///    a step (rule 2 of the steps), as they would without sound.
/// 3. The worst suspect (the largest jump from its previous mark; on a tie a mark of someone
///    other than the group's reference, whose stream is the yardstick, then the higher node id,
///    then the later time) is set aside, and its group is solved again from the start without it.
///    This repeats until no mark is suspect: at most once per mark.
///
/// Like the rest of the solver the rule reads only the set of counted marks in sorted orders, so
/// every node sets aside the same marks. A tree of marks has every residual 0 and sets nothing
/// aside; so does any set of marks that agree to within the threshold. With two viewers, a stray
/// mark shows in both their residuals (a mark is measured against the other's): the tie rule
/// sets aside the one that is not the reference's, and either way the label's remaining mark
/// links nobody, so the offsets are those of the other moments.
extension CalibrationSolver {
    /// The mark to set aside first in `fit`, if any is suspect.
    static func worstSuspect(in component: Component, fit: [Piece: Double]) -> Mark? {
        var byNode: [NodeID: [Residual]] = [:]
        for (piece, run) in residuals(in: component, fit: fit) { byNode[piece.node, default: []] += run }
        var worst: (mark: Mark, jump: Double)?
        for node in byNode.keys.sorted() {
            let unsorted = byNode[node]!
            let run = unsorted.sorted { ($0.mark.time, $0.mark.label) < ($1.mark.time, $1.mark.label) }
            let heard = run.indices.filter { run[$0].mark.isHeard }
            for index in run.indices where !run[index].mark.isHeard {
                guard let jump = suspectJump(at: index, in: run, heard: heard) else { continue }
                let candidate = (mark: run[index].mark, jump: jump)
                if worst.map({ isWorse(candidate, than: $0, reference: component.reference) }) ?? true {
                    worst = candidate
                }
            }
        }
        return worst?.mark
    }

    /// How far the tap at `index` of its node's `run` jumps from its neighbours if it is suspect
    /// (rules 2 and 2a), else `nil`. `heard` holds the indices of the run's heard marks.
    private static func suspectJump(at index: Int, in run: [Residual], heard: [Int]) -> Double? {
        func apart(_ other: Int) -> Double { abs(run[index].value - run[other].value) }
        let threshold = stepThreshold.fractionalMilliseconds  // residuals are in ms
        // Rule 2: neither neighbour agrees (the first mark only when there is sound).
        if index > 0 {
            let jump = apart(index - 1)
            if jump > threshold, index + 1 == run.count || apart(index + 1) > threshold { return jump }
        } else if !heard.isEmpty, run.count > 1, apart(1) > threshold {
            return apart(1)
        }
        // Rule 2a: the sound on both sides disagrees.
        if let before = heard.last(where: { $0 < index }), let after = heard.first(where: { $0 > index }),
            apart(before) > threshold, apart(after) > threshold
        {
            return apart(before)
        }
        return nil
    }

    /// The order of rule 3: the larger jump in whole milliseconds (so that a two-viewer tie,
    /// equal up to rounding, is a tie), then not the reference's, then the higher node id, then
    /// the later time.
    private static func isWorse(
        _ a: (mark: Mark, jump: Double), than b: (mark: Mark, jump: Double), reference: NodeID
    ) -> Bool {
        let (aJump, bJump) = (a.jump.rounded(), b.jump.rounded())
        if aJump != bJump { return aJump > bJump }
        let (aReference, bReference) = (a.mark.node == reference, b.mark.node == reference)
        if aReference != bReference { return bReference }
        if a.mark.node != b.mark.node { return a.mark.node > b.mark.node }
        return (a.mark.time, a.mark.label) > (b.mark.time, b.mark.label)
    }
}
