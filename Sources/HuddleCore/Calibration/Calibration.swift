/// The calibrated offsets of a room's nodes: how far each node's stream runs behind its group's
/// reference node, as computed by ``CalibrationSolver`` from the room's marks.
///
/// Every time is a moment on the wall clock of the node it belongs to. A positive offset means the
/// node's stream is *behind* (later than) the reference's. Only nodes in a group of at least two
/// marking nodes are calibrated; everyone else has no placement.
///
/// ```swift
/// // alice marked "kickoff" at 2 000 ms, bob at 4 000 ms (each on their own clock):
/// let calibration = CalibrationSolver.solve(roomEvents)
/// calibration.offset(of: alice)                 // .zero: alice marked first, she is the reference
/// calibration.offset(of: bob)                   // 2 s: bob's stream is 2 s behind hers
/// calibration.holdBack(from: alice, to: bob)    // 2 s: bob sees alice's messages 2 s late
/// calibration.holdBack(from: bob, to: alice)    // .zero: alice sees bob's at once
/// ```
public struct Calibration: Equatable, Sendable {
    /// Where one calibrated node stands: its group's reference node and its offset from it.
    public struct Placement: Equatable, Sendable {
        /// The reference node of the node's group (the node whose mark came first).
        public let reference: NodeID
        /// How far this node's stream runs behind the reference's now (negative: ahead), to the
        /// millisecond, including the node's delay nudges: the offset of the last piece of
        /// ``timeline``.
        public var offset: TimeSpan { timeline.last!.offset }
        /// How many steps the solver found in this node's lag (a rebuffer, a catch-up): its
        /// offset is fitted from its marks after the latest one (see ``CalibrationSolver``).
        public let steps: Int
        /// The node's offset as a function of its own clock: each piece holds from its `from`
        /// until the next piece's, the first from the beginning of time. A step, a delay nudge
        /// or a pause changes the offset from its moment on, never before it, so a message's
        /// game moment (``Calibration/gameTime(of:)``) is fixed when it is written.
        public let timeline: [Piece]

        /// One stretch of a node's offset: `offset` from the node's clock reading `from` on.
        public struct Piece: Equatable, Sendable {
            public let from: WallTime
            public let offset: TimeSpan

            public init(from: WallTime, offset: TimeSpan) {
                self.from = from
                self.offset = offset
            }
        }

        /// What sound contributed to the node's current offset: `nil` when no heard match counts
        /// in its latest piece (its offset then comes from marks alone).
        public let sound: Sound?

        /// The heard matches (``HeardMatch``) in a node's latest piece, summed up for people:
        /// "bob: 3.2 s behind (heard, confidence 106)".
        public struct Sound: Equatable, Sendable {
            /// How many heard matches with this node count in its latest piece.
            public let matches: Int
            /// The highest confidence among them (a standard score; 9 is the least that counts).
            public let confidence: Double
            /// The smallest uncertainty among them.
            public let sigma: TimeSpan
            /// Whether the step that started the latest piece was found by sound (a heard match
            /// that differed) rather than by marks.
            public let stepHeard: Bool

            public init(matches: Int, confidence: Double, sigma: TimeSpan, stepHeard: Bool = false) {
                self.matches = matches
                self.confidence = confidence
                self.sigma = sigma
                self.stepHeard = stepHeard
            }
        }

        /// A placement with one offset for all time.
        public init(reference: NodeID, offset: TimeSpan, steps: Int = 0, sound: Sound? = nil) {
            self.init(
                reference: reference, timeline: [Piece(from: .distantPast, offset: offset)], steps: steps, sound: sound)
        }

        /// A placement whose offset changes over time: `timeline` sorted by `from`, not empty.
        public init(reference: NodeID, timeline: [Piece], steps: Int = 0, sound: Sound? = nil) {
            precondition(!timeline.isEmpty, "a placement has an offset")
            self.reference = reference
            self.timeline = timeline
            self.steps = steps
            self.sound = sound
        }

        /// The offset that held when the node's clock read `time`.
        public func offset(at time: WallTime) -> TimeSpan {
            // Timelines are short (one piece per step and nudge): a scan from the end is fine.
            timeline.last { $0.from <= time }?.offset ?? timeline[0].offset
        }
    }

    /// A set of nodes with known offsets relative to each other, for status output.
    public struct Group: Equatable, Sendable {
        /// The node the offsets are measured from.
        public let reference: NodeID
        /// Every node of the group, the reference included, sorted by id.
        public let members: [NodeID]

        public init(reference: NodeID, members: [NodeID]) {
            self.reference = reference
            self.members = members
        }
    }

    /// Every calibrated node's placement; uncalibrated nodes are absent.
    public let placements: [NodeID: Placement]

    /// A mark set aside because it disagrees with the rest of its node's marks (a stray key):
    /// it moves no offset until another mark confirms it (see `CalibrationSolver+Suspects`).
    public struct SuspectMark: Hashable, Comparable, Sendable {
        public let node: NodeID
        /// The label, normalised.
        public let label: String
        /// When the node's clock read this when it marked.
        public let at: WallTime

        public init(node: NodeID, label: String, at: WallTime) {
            self.node = node
            self.label = label
            self.at = at
        }

        public static func < (a: SuspectMark, b: SuspectMark) -> Bool { (a.node, a.label) < (b.node, b.label) }
    }

    /// The marks set aside, sorted by node then label.
    public let suspects: [SuspectMark]

    /// A calibration with exactly these placements (and suspect marks).
    public init(placements: [NodeID: Placement] = [:], suspects: [SuspectMark] = []) {
        self.placements = placements
        self.suspects = suspects
    }

    /// Nobody calibrated: every message is shown at once.
    public static let none = Calibration()

    /// Whether no node is calibrated.
    public var isEmpty: Bool { placements.isEmpty }

    /// The node's placement, or `nil` if it is not calibrated.
    public func placement(of node: NodeID) -> Placement? { placements[node] }

    /// The node's offset from its group's reference, or `nil` if uncalibrated.
    public func offset(of node: NodeID) -> TimeSpan? { placements[node]?.offset }

    /// The reference node of the node's group, or `nil` if it is not calibrated.
    public func reference(of node: NodeID) -> NodeID? { placements[node]?.reference }

    /// Whether the node has a known offset.
    public func isCalibrated(_ node: NodeID) -> Bool { placements[node] != nil }

    /// Whether both nodes are calibrated in the same group, so their relative offset is known.
    /// An uncalibrated node is connected to nobody, not even to itself.
    public func areConnected(_ a: NodeID, _ b: NodeID) -> Bool {
        guard let ra = placements[a]?.reference, let rb = placements[b]?.reference else { return false }
        return ra == rb
    }

    /// How far `node`'s stream runs behind `other`'s (negative: ahead), or `nil` if they are not
    /// connected. This is `offset(node) − offset(other)`.
    ///
    /// ```swift
    /// calibration.lag(of: bob, behind: alice)    // 2 s
    /// calibration.lag(of: alice, behind: bob)    // -2 s
    /// ```
    public func lag(of node: NodeID, behind other: NodeID) -> TimeSpan? {
        guard let mine = placements[node], let theirs = placements[other], mine.reference == theirs.reference
        else { return nil }
        return mine.offset - theirs.offset
    }

    /// How long `reader` holds back a message from `sender`, measured from the moment it was
    /// written: `max(0, offset(reader) − offset(sender))`. `nil` if they are not connected (the
    /// message is then shown at once). A reader ahead of the sender holds nothing back (0).
    public func holdBack(from sender: NodeID, to reader: NodeID) -> TimeSpan? {
        lag(of: reader, behind: sender).map { max(.zero, $0) }
    }

    /// The moment of the game `event` was made at, on the reference's clock:
    /// `createdAt − offset(origin)` with the origin's offset *when it wrote it* (see
    /// ``Placement/timeline``), or `nil` if the origin is not calibrated. A pause, a nudge or a
    /// step later on does not move it.
    public func gameTime(of event: Event) -> WallTime? {
        placements[event.origin].map { event.createdAt - $0.offset(at: event.createdAt) }
    }

    /// When `reader`'s clock reaches the game moment of `event`: ``gameTime(of:)`` plus the
    /// reader's offset now, or `nil` if the origin and the reader are not connected.
    public func dueTime(of event: Event, for reader: NodeID) -> WallTime? {
        guard let mine = placements[reader], let theirs = placements[event.origin], mine.reference == theirs.reference
        else { return nil }
        return event.createdAt - theirs.offset(at: event.createdAt) + mine.offset
    }

    /// When the slowest placed stream of `event`'s origin's group shows the event's moment, on the
    /// origin's clock: its `createdAt` plus how far that stream is behind the origin's
    /// (``gameTime(of:)`` plus the group's largest offset), or `createdAt` itself when the origin is
    /// not placed. The shield counts from here (``HoldBackSchedule``): a reader placed with nobody
    /// is taken to be at most the shield behind the slowest stream anyone is placed with, and the
    /// lines of one group come out in game order.
    public func slowestShowing(of event: Event) -> WallTime {
        guard let theirs = placements[event.origin] else { return event.createdAt }
        let slowest = placements.values.lazy.filter { $0.reference == theirs.reference }.map(\.offset).max() ?? theirs.offset
        return event.createdAt - theirs.offset(at: event.createdAt) + slowest
    }

    /// The two placed streams farthest apart, and how far: the room's widest spread, which the
    /// shield grows to (see ``HoldBackSchedule/grow(toCover:now:)``). `nil` with nobody placed.
    public var widestSpread: Spread? {
        var widest: Spread?
        for group in groups {
            let placed = group.members.compactMap { node in placements[node].map { (node, $0.offset) } }
            guard let ahead = placed.min(by: { ($0.1, $0.0) < ($1.1, $1.0) }),
                let behind = placed.max(by: { ($0.1, $1.0) < ($1.1, $0.0) })
            else { continue }
            let spread = behind.1 - ahead.1
            if spread > (widest?.apart ?? .zero) { widest = Spread(ahead: ahead.0, behind: behind.0, apart: spread) }
        }
        return widest
    }

    /// Two placed streams and how far apart they run.
    public struct Spread: Equatable, Sendable {
        /// The stream ahead...
        public var ahead: NodeID
        /// ...the stream behind it...
        public var behind: NodeID
        /// ...and by how much.
        public var apart: TimeSpan
    }

    /// The key history is ordered by: ``gameTime(of:)``, or the event's own `createdAt` when its
    /// origin is not calibrated.
    public func historyKey(of event: Event) -> WallTime {
        gameTime(of: event) ?? event.createdAt
    }

    /// The events in history order: by ``historyKey(of:)``, ties by event id (each key computed
    /// once). Deterministic for every input order; duplicates are kept.
    public func historyOrder(_ events: some Sequence<Event>) -> [Event] {
        // The closures' types are spelled out: inferred, this one expression took the type
        // checker 8.5 s, on every build's longest path.
        let keyed: [(key: WallTime, event: Event)] = events.map { event in (key: historyKey(of: event), event: event) }
        let sorted = keyed.sorted { (a: (key: WallTime, event: Event), b: (key: WallTime, event: Event)) -> Bool in
            a.key != b.key ? a.key < b.key : a.event.id < b.event.id
        }
        return sorted.map { $0.event }
    }

    /// The calibrated groups, sorted by reference id, each with its members sorted by id.
    public var groups: [Group] {
        var members: [NodeID: [NodeID]] = [:]
        for (node, placement) in placements {
            members[placement.reference, default: []].append(node)
        }
        return members
            .sorted { $0.key < $1.key }
            .map { Group(reference: $0.key, members: $0.value.sorted()) }
    }
}
