/// Computes a room's ``Calibration`` from its events: a pure, deterministic function of the *set*
/// of events, so every node that holds the same events computes the same offsets, whatever order
/// they arrived in and however often.
///
/// Only `.join`, `.leave`, `.mark(label:)`, `.unmark(label:)`, `.delayNudge(milliseconds:)` and
/// `.heard(_:)` matter:
///
/// 1. **Counting.** Per origin node, if its latest membership event (by seq) is a `.leave`, none of
///    its marks or nudges count. Otherwise only those with a seq above its latest `.join` count
///    (re-joining resets the node). Labels are normalised (``CalibrationLabel``); of several marks
///    and retractions (`.unmark`) of the same label by the same node only the latest (highest
///    seq) counts, and a retraction counts as no mark. A mark's time is the event's `createdAt`,
///    on the marking node's own clock.
///
///    A `.heard` match (see ``HeardMatch``) by a counted origin A about peer B is one more
///    *moment*, unnamed, that A saw at `at` and B at `at + lag` (rounded to the millisecond), as
///    if both had marked it: two marks of their own moment. It counts when its confidence is at
///    least ``HeardMatch/minimumConfidenceTenths``, B is not A, B's latest membership event is a
///    `.join`, and the moment on B's clock is not before that join. Each of its two marks weighs
///    `2·(200 ms / σ)²` (σ at least 1 ms) against a tap's 1, so the pair's difference weighs
///    `(200 ms / σ)²` against two taps' ½: a match is a tap whose σ is the match's.
/// 2. **Groups.** Nodes and labels form a graph with one edge per counted mark. A connected part
///    with fewer than two nodes calibrates nobody. The *reference* of a part is the node whose mark
///    came first: the smallest (`createdAt`, node id, label) over the part's marks; its offset is 0.
/// 3. **Offsets.** The weighted least-squares fit of `t(u, e) = g(e) + offset(u)` over the part's
///    marks (taps weigh 1, heard marks as above), with `offset(reference) = 0`, rounded to the nearest millisecond (halves away from zero).
///    On a tree of marks this is exact: `offset(u) = t(u, e) − t(v, e) + offset(v)`. With more
///    marks than a tree needs, reaction noise averages out instead of the last mark winning.
/// 4. **Nudges.** Each calibrated node's counted delay nudges are added to its offset (the
///    reference's too) from the nudge's time on (``Calibration/Placement/timeline``). An
///    uncalibrated node's nudges wait until it is calibrated. A nudge made after a node's first
///    mark moved its stream for every mark it makes after it (a pause of 12.8 s is a nudge of
///    12.8 s at the resume): such marks are fitted less the nudges before them
///    (``Mark/fitted``), so a mark that shows exactly the paused lag fits the marks before the
///    pause instead of looking like a stray key or a step.
/// 5. **Steps and stray marks** (`CalibrationSolver+Steps`, `CalibrationSolver+Suspects`): a
///    mark that fits none of its node's neighbouring marks is set aside; two that agree after a
///    change start a new piece of the node's lag. Sound outvotes thumbs: a tap that disagrees
///    with the sound on both sides of it is set aside, a heard match is never, and one heard match
///    that differs is enough for a step.
///
/// ```swift
/// // node 1 marks "A" at 2 000 ms; node 2 marks "A" at 4 000 and "B" at 10 000; node 3 marks "B" at 6 000.
/// let calibration = CalibrationSolver.solve(events)
/// calibration.offset(of: node1)   // .zero
/// calibration.offset(of: node2)   // 2 s
/// calibration.offset(of: node3)   // -2 s  (6 000 − 10 000 + 2 000 ms)
/// ```
///
/// Two events with the same id but different contents (which an honest origin never signs) are
/// resolved deterministically: one of them is kept by a fixed order of their contents.
///
/// Marks are whole milliseconds (the wire's unit), and the least-squares arithmetic is done in
/// milliseconds, as `Double`s; what goes in and out is typed (moments as ``WallTime``, offsets as
/// ``TimeSpan``).
public enum CalibrationSolver {
    /// The calibration the given room events imply. Events of other kinds are ignored.
    public static func solve(_ events: some Sequence<Event>) -> Calibration {
        let counted = countedMarksAndNudges(in: events)
        var placements: [NodeID: Calibration.Placement] = [:]
        var suspects: [Mark] = []
        for (component, fit) in settle(counted.marks, suspects: &suspects) {
            let sound = soundEvidence(in: component)
            for (node, pieces) in timelines(of: component, fit: fit, nudges: counted.nudges, firstMarks: counted.firstMarks) {
                placements[node] = Calibration.Placement(
                    reference: component.reference, timeline: pieces, steps: component.steps[node]?.count ?? 0,
                    sound: sound[node])
            }
        }
        let set = suspects.filter { placements[$0.node] != nil }
            .compactMap { mark in
                mark.label.name.map { Calibration.SuspectMark(node: mark.node, label: $0.normalized, at: mark.time) }
            }
        return Calibration(placements: placements, suspects: set.sorted())
    }

    /// Each node's offset over time in a settled component: one piece per piece of its lag (from
    /// the step that starts it), and a new piece at each delay nudge within it, which adds to the
    /// offset from the nudge's time on. A piece's fit is of marks less the nudges made since the
    /// node's first mark (``Mark/fitted``), so a later piece starts at its fit plus those nudges
    /// made before it; nudges made before the first mark count in the first piece only.
    static func timelines(
        of component: Component, fit: [Piece: Double], nudges: [NodeID: [Nudge]], firstMarks: [NodeID: WallTime]
    ) -> [NodeID: [Calibration.Placement.Piece]] {
        var timelines: [NodeID: [Calibration.Placement.Piece]] = [:]
        for (piece, offset) in fit.sorted(by: { $0.key < $1.key }) {
            let steps = component.steps[piece.node] ?? []
            let start = piece.index == 0 ? WallTime.distantPast : steps[piece.index - 1]
            let end = piece.index < steps.count ? steps[piece.index] : .distantFuture
            var current = TimeSpan.milliseconds(roundedMilliseconds(offset))
            if piece.index > 0, let first = firstMarks[piece.node] {
                current += nudged(nudges[piece.node] ?? [], since: first, before: start)
            }
            var timeline = [Calibration.Placement.Piece(from: start, offset: current)]
            let within = (nudges[piece.node] ?? []).filter { $0.time > start && $0.time < end }
            for nudge in within.sorted(by: { ($0.time, $0.amount) < ($1.time, $1.amount) }) {
                current += nudge.amount
                if timeline.last!.from == nudge.time { timeline.removeLast() }
                timeline.append(Calibration.Placement.Piece(from: nudge.time, offset: current))
            }
            timelines[piece.node, default: []] += timeline
        }
        return timelines
    }

    /// The sum of `nudges` made after `since` and before `before`: how far they had moved a
    /// stream by then.
    static func nudged(_ nudges: [Nudge], since: WallTime, before: WallTime) -> TimeSpan {
        nudges.reduce(.zero) { sum, nudge in nudge.time > since && nudge.time < before ? sum + nudge.amount : sum }
    }

    /// One counted mark: `node` saw `label` when its clock read `time`. A heard match is two
    /// marks of its own moment (``Moment/heard(_:)``), with the match's weight and figures.
    struct Mark: Equatable {
        var node: NodeID
        var label: Moment
        var time: WallTime
        /// What the node's delay nudges made after its first mark and before this one add up to
        /// (a pause since, say): this mark measured a lag that much longer.
        var nudged: TimeSpan = .zero
        /// `(200 ms / σ)²`-like: 1 for a tap (see the type's rule 1 for a heard match).
        var weight: Double = 1
        /// The match this mark is one side of, for a heard mark.
        var match: HeardMatch?

        /// Whether this mark is one side of a heard match.
        var isHeard: Bool { match != nil }

        /// The time the fit reads: ``time`` less ``nudged``, the mark as it would have been
        /// without the nudges since the node's first mark.
        var fitted: WallTime { time - nudged }

        /// The order that picks a reference: earliest time, then node id, then label.
        static func comesFirst(_ a: Mark, _ b: Mark) -> Bool {
            if a.time != b.time { return a.time < b.time }
            if a.node != b.node { return a.node < b.node }
            return a.label < b.label
        }
    }

    /// What a mark is a mark of: a named moment everyone can see, or the moment of sound one
    /// heard match is centred on (named by that event's id). Named moments order first.
    enum Moment: Hashable, Comparable {
        case label(CalibrationLabel)
        case heard(EventID)

        /// The label of a named moment.
        var name: CalibrationLabel? {
            if case .label(let label) = self { label } else { nil }
        }

        static func < (a: Moment, b: Moment) -> Bool {
            switch (a, b) {
            case (.label(let x), .label(let y)): x < y
            case (.heard(let x), .heard(let y)): x < y
            case (.label, .heard): true
            case (.heard, .label): false
            }
        }
    }

    /// One counted delay nudge: `amount` added to its node's offset at `time`.
    struct Nudge: Equatable {
        var time: WallTime
        var amount: TimeSpan
    }

    /// A connected group of nodes and labels with at least two nodes.
    struct Component {
        var reference: NodeID
        /// The group's marks, sorted by (label, node).
        var marks: [Mark]
        /// Per node, the times at which a step in its lag starts a new piece, ascending: a mark
        /// at or after the k-th time belongs to piece k (see ``settle(_:suspects:)``).
        var steps: [NodeID: [WallTime]] = [:]

        /// The piece of its node's lag `mark` belongs to: 0 before any step.
        func piece(of mark: Mark) -> Int {
            steps[mark.node]?.count { $0 <= mark.time } ?? 0
        }
    }

    // MARK: - Counting

    /// The marks and summed nudges that count, per the rules in the type's documentation. Marks
    /// come back sorted by (label, node), one per (node, label).
    static func countedMarksAndNudges(
        in events: some Sequence<Event>
    ) -> (marks: [Mark], nudges: [NodeID: [Nudge]], firstMarks: [NodeID: WallTime]) {
        // Deduplicate by id, keeping only the kinds that matter.
        var byID: [EventID: Event] = [:]
        for event in events where isRelevant(event.body) {
            if let kept = byID[event.id], !precedes(event, kept) { continue }
            byID[event.id] = event
        }
        var byOrigin: [NodeID: [Event]] = [:]
        for event in byID.values {
            byOrigin[event.origin, default: []].append(event)
        }

        var marks: [Mark] = []
        var nudges: [NodeID: [Nudge]] = [:]
        var heard: [Event] = []
        var joinedAt: [NodeID: WallTime] = [:]  // members whose latest membership event is a join
        for (origin, unsorted) in byOrigin {
            let log = unsorted.sorted { $0.seq < $1.seq }
            guard let since = countingStart(of: log) else { continue }
            if let join = log.last(where: { $0.seq == since }), case .join = join.body {
                joinedAt[origin] = join.createdAt
            }
            var latest: [CalibrationLabel: Event] = [:]
            var nudge: [Nudge] = []
            for event in log where event.seq > since {
                switch event.body {
                case .mark(let raw), .unmark(let raw):
                    // The latest of a label's marks and retractions (seq ascending) decides.
                    if let label = CalibrationLabel(raw) { latest[label] = event }
                case .delayNudge(let milliseconds):
                    nudge.append(Nudge(time: event.createdAt, amount: .milliseconds(milliseconds)))
                case .heard:
                    heard.append(event)
                default:
                    break
                }
            }
            for (label, event) in latest {
                guard case .mark = event.body else { continue }  // taken back
                marks.append(Mark(node: origin, label: .label(label), time: event.createdAt))
            }
            if !nudge.isEmpty { nudges[origin] = nudge }
        }
        for event in heard {
            guard case .heard(let match) = event.body, match.peer != event.origin,
                match.confidenceTenths >= HeardMatch.minimumConfidenceTenths,
                let peerJoined = joinedAt[match.peer], match.peerAt >= peerJoined
            else { continue }
            let sigma = max(.milliseconds(1), match.sigma)
            let weight = 2 * (HeardMatch.tapSigma / sigma) * (HeardMatch.tapSigma / sigma)
            let moment = Moment.heard(event.id)
            marks.append(Mark(node: event.origin, label: moment, time: match.at, weight: weight, match: match))
            marks.append(Mark(node: match.peer, label: moment, time: match.peerAt, weight: weight, match: match))
        }
        var firstMarks: [NodeID: WallTime] = [:]
        for mark in marks { firstMarks[mark.node] = min(firstMarks[mark.node] ?? mark.time, mark.time) }
        for index in marks.indices {
            guard let nodeNudges = nudges[marks[index].node], let first = firstMarks[marks[index].node] else { continue }
            marks[index].nudged = nudged(nodeNudges, since: first, before: marks[index].time)
        }
        marks.sort { $0.label != $1.label ? $0.label < $1.label : $0.node < $1.node }
        return (marks, nudges, firstMarks)
    }

    /// The seq after which a node's marks count (its latest join, 0 if none), or `nil` if its
    /// latest membership event is a leave. `log` is one origin's events sorted by seq.
    private static func countingStart(of log: [Event]) -> UInt64? {
        for event in log.reversed() {
            switch event.body {
            case .join: return event.seq
            case .leave: return nil
            default: continue
            }
        }
        return 0
    }

    private static func isRelevant(_ body: EventBody) -> Bool {
        switch body {
        case .join, .leave, .mark, .unmark, .delayNudge, .heard: true
        case .chat, .picture, .calibrationEvent, .sealed, .score, .teams, .voided: false
        }
    }

    /// A fixed order on events with the same id, to pick one of two conflicting versions.
    private static func precedes(_ a: Event, _ b: Event) -> Bool {
        func key(_ body: EventBody) -> (Int, String, Int64) {
            switch body {
            case .join(let nick): (0, nick, 0)
            case .leave: (1, "", 0)
            case .chat(let text): (2, text, 0)
            case .calibrationEvent(let label): (3, label, 0)
            case .mark(let label): (4, label, 0)
            case .delayNudge(let milliseconds): (5, "", milliseconds)
            case .sealed(let bytes): (6, bytes.map { String($0, radix: 16) }.joined(), 0)
            case .score(let home, let guest): (7, "", Int64(home) << 16 | Int64(guest))
            case .teams(let home, let guest): (8, home + "\u{0}" + guest, 0)
            case .unmark(let label): (9, label, 0)
            case .heard(let match):
                (
                    10, "\(match.peer) \(match.atMilliseconds) \(match.sigmaMicros) \(match.confidenceTenths)",
                    match.lag.microseconds
                )
            case .picture(let picture): (11, picture.rootHex + "\u{0}" + picture.caption, 0)
            case .voided(let from): (12, "", Int64(truncatingIfNeeded: from))
            }
        }
        // The wire's readings, so that the order holds past what a WallTime holds.
        let (aTime, bTime) = (a.createdAtMilliseconds, b.createdAtMilliseconds)
        if aTime != bTime { return aTime < bTime }
        return key(a.body) < key(b.body)
    }

    // MARK: - Groups

    /// The connected parts of the node–label graph that have at least two nodes, sorted by reference.
    /// `marks` must be sorted by (label, node); each part's marks keep that order.
    static func components(of marks: [Mark]) -> [Component] {
        let nodes = Set(marks.map(\.node)).sorted()
        let labels = Set(marks.map(\.label)).sorted()  // moments
        let nodeIndex = Dictionary(uniqueKeysWithValues: nodes.enumerated().map { ($1, $0) })
        let labelIndex = Dictionary(uniqueKeysWithValues: labels.enumerated().map { ($1, nodes.count + $0) })

        var sets = DisjointSets(count: nodes.count + labels.count)
        for mark in marks {
            sets.union(nodeIndex[mark.node]!, labelIndex[mark.label]!)
        }
        var grouped: [Int: [Mark]] = [:]
        for mark in marks {
            grouped[sets.find(nodeIndex[mark.node]!), default: []].append(mark)
        }
        return grouped.values.compactMap { marks -> Component? in
            guard Set(marks.map(\.node)).count >= 2, let first = marks.min(by: Mark.comesFirst) else { return nil }
            return Component(reference: first.node, marks: marks)
        }
        .sorted { $0.reference < $1.reference }
    }

    // MARK: - Offsets

    /// The least-squares offsets of every node of `component` from its reference, before nudges.
    ///
    /// The label times `g(e)` are eliminated: for fixed offsets the best `g(e)` is the mean of
    /// `t(u, e) − offset(u)` over the label's marks, which leaves the normal equations
    /// `L · offset = b` with `L` the graph Laplacian of the nodes, where each label that `k` nodes
    /// marked links each pair of them with weight `1/k`, and `b(u) = Σ_e (t(u, e) − mean_e t)`.
    /// Fixing the reference at 0 removes its row and column and makes `L` positive definite.
    /// Everything is laid out in sorted order, so the floating-point result is bit-identical for
    /// every arrival order of the same marks.
    ///
    /// With steps (``Component/steps``) each piece of a node's lag is an unknown of its own (the
    /// reference's first piece is the one fixed at 0), and a node's offset is its latest piece's.
    static func offsets(in component: Component) -> [NodeID: TimeSpan] {
        offsets(from: fit(component))
    }

    /// Each node's offset in a ``fit(_:)``: its latest piece's, rounded.
    static func offsets(from fit: [Piece: Double]) -> [NodeID: TimeSpan] {
        var offsets: [NodeID: TimeSpan] = [:]
        var latest: [NodeID: Int] = [:]
        for (piece, offset) in fit where piece.index >= latest[piece.node, default: -1] {
            latest[piece.node] = piece.index
            offsets[piece.node] = .milliseconds(roundedMilliseconds(offset))
        }
        return offsets
    }

    /// One piece of a node's lag: between two steps, one offset.
    struct Piece: Hashable, Comparable {
        var node: NodeID
        var index: Int

        static func < (a: Piece, b: Piece) -> Bool { (a.node, a.index) < (b.node, b.index) }
    }

    /// The least-squares offset of every piece of `component` from the reference's first piece,
    /// unrounded (see ``offsets(in:)``).
    static func fit(_ component: Component) -> [Piece: Double] {
        let reference = Piece(node: component.reference, index: 0)
        let others = Set(component.marks.map { Piece(node: $0.node, index: component.piece(of: $0)) })
            .subtracting([reference]).sorted()
        let index = Dictionary(uniqueKeysWithValues: others.enumerated().map { ($1, $0) })
        // Times relative to the reference's first mark keep the doubles small; in whole ms, which
        // cannot overflow an Int64 (a WallTime holds ±2⁶³ µs).
        let base = component.marks.filter { $0.node == reference.node }.min(by: Mark.comesFirst)!.time
        func relative(_ time: WallTime) -> Double {
            Double(time.millisecondsSinceEpoch - base.millisecondsSinceEpoch)
        }

        let n = others.count
        var matrix = [[Double]](repeating: [Double](repeating: 0, count: n), count: n)
        var rhs = [Double](repeating: 0, count: n)
        var start = component.marks.startIndex
        while start < component.marks.endIndex {
            let label = component.marks[start].label
            var end = start
            while end < component.marks.endIndex, component.marks[end].label == label { end += 1 }
            let marks = component.marks[start..<end]  // sorted by node
            start = end
            guard marks.count >= 2 else { continue }

            // With weights w, g(e) is the weighted mean, and each pair of the moment's marks is
            // linked with weight w_u·w_v / Σw. Taps weigh 1: then this is 1/k, as it always was,
            // in the same floating-point operations.
            let inverse = 1 / marks.reduce(0.0) { $0 + $1.weight }
            let mean = marks.reduce(0.0) { $0 + $1.weight * relative($1.fitted) } * inverse
            for mark in marks {
                guard let row = index[Piece(node: mark.node, index: component.piece(of: mark))] else { continue }
                matrix[row][row] += mark.weight - mark.weight * mark.weight * inverse
                rhs[row] += mark.weight * (relative(mark.fitted) - mean)
                for other in marks where other.node != mark.node {
                    if let column = index[Piece(node: other.node, index: component.piece(of: other))] {
                        matrix[row][column] -= mark.weight * other.weight * inverse
                    }
                }
            }
        }

        let solution = solveLinearSystem(matrix, rhs)
        var offsets: [Piece: Double] = [reference: 0]
        for (piece, row) in index {
            offsets[piece] = solution[row]
        }
        return offsets
    }

    /// Solves `matrix · x = rhs` by Gaussian elimination with partial pivoting (the first row with
    /// the largest magnitude wins a tie). A zero pivot, which a connected component never has,
    /// leaves that unknown at 0 rather than failing.
    static func solveLinearSystem(_ matrix: [[Double]], _ rhs: [Double]) -> [Double] {
        var a = matrix
        var b = rhs
        let n = b.count
        for column in 0..<n {
            var pivot = column
            for row in (column + 1)..<n where abs(a[row][column]) > abs(a[pivot][column]) {
                pivot = row
            }
            guard a[pivot][column] != 0 else { continue }
            if pivot != column {
                a.swapAt(pivot, column)
                b.swapAt(pivot, column)
            }
            for row in (column + 1)..<n {
                let factor = a[row][column] / a[column][column]
                guard factor != 0 else { continue }
                for k in column..<n {
                    a[row][k] -= factor * a[column][k]
                }
                b[row] -= factor * b[column]
            }
        }
        var x = [Double](repeating: 0, count: n)
        for row in stride(from: n - 1, through: 0, by: -1) {
            guard a[row][row] != 0 else { continue }
            var sum = b[row]
            for k in (row + 1)..<n {
                sum -= a[row][k] * x[k]
            }
            x[row] = sum / a[row][row]
        }
        return x
    }

    /// `value` (ms) rounded to the nearest integer (halves away from zero), clamped to `Int64`.
    static func roundedMilliseconds(_ value: Double) -> Int64 {
        guard value.isFinite else { return 0 }
        let rounded = value.rounded()
        if let exact = Int64(exactly: rounded) { return exact }
        return rounded < 0 ? .min : .max
    }
}

/// Union–find over `0..<count` with path halving and union by size.
private struct DisjointSets {
    private var parent: [Int]
    private var size: [Int]

    init(count: Int) {
        parent = Array(0..<count)
        size = [Int](repeating: 1, count: count)
    }

    mutating func find(_ element: Int) -> Int {
        var element = element
        while parent[element] != element {
            parent[element] = parent[parent[element]]
            element = parent[element]
        }
        return element
    }

    mutating func union(_ a: Int, _ b: Int) {
        var (ra, rb) = (find(a), find(b))
        guard ra != rb else { return }
        if size[ra] < size[rb] { swap(&ra, &rb) }
        parent[rb] = ra
        size[ra] += size[rb]
    }
}
