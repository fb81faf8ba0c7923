/// Which of a listening node's windows of sound leave it, and for whom (docs/AUDIO.md,
/// "Privacy"). Sound features say which words were said in the room (bench part 18: a
/// plain classifier names 4 of 5 keywords from them), so a node shares only what matching needs:
///
/// - **announcing**: the first ``Rules/announce`` windows after listening starts go to every
///   peer, so that peers which listen learn that this node does;
/// - **placing**: a peer that listens (a window of its own came within ``Rules/peerListening``)
///   and whose offset from this node is not known yet gets every window, from a budget of
///   ``Rules/placing`` seconds a host (all the ids at one address share it) that refills at that
///   much an hour (a pair that matches at all is placed within about 30 s; a peer watching
///   something else, or one that only says it listens, is not sent the room's sound for ever, nor
///   again each time it comes back); a run starts only with ``Rules/placingRun`` in the budget;
///   and from ``Rules/placingTotal`` for everyone together, a window counted once however many
///   get it: fresh keys, or more machines, buy no more of the room's sound (five ids taking turns
///   got 99 % of it with a budget per id, issue 45);
/// - **re-checking**: ``Rules/recheckWindows`` windows in a row to every peer, at most once every
///   ``Rules/recheckEvery``, so that a rebuffer or a drift shows and a peer that started
///   listening unseen hears of this one. The listeners of a room take turns: a node waits until
///   no placed peer has sent it sound for `recheckEvery / (placed listeners + 1)` (a listener:
///   a peer that sent a window within two re-check periods), so with two listeners a re-check
///   crosses the pair about every 60 s, with four every 30 s, while each node still shares 4 s
///   in 120;
///   When this node's matcher finds a peer's lag moved (``stepHeard()``), it re-checks at
///   once if half a period has passed since its last: between two matches alone the solver
///   cannot tell whose stream moved, and this node's sound, matched by the others, tells it;
/// - nothing else.
///
/// Once a pair is placed, at most 4 s of every 120 s leave the node for re-checks: 120 s of room
/// sound an hour, and at most ``Rules/placingTotal`` more for placing: 300 s an hour in all. Pure: the machine asks with each window, and the answer depends only on what it was
/// told.
///
/// ```swift
/// var sharing = SoundSharing(me: aliceID)
/// sharing.peerWindow(from: bob, at: now)                       // bob listens too
/// let to = sharing.recipients(
///     among: [bob, carol], placed: { _ in false }, host: { hosts[$0]! }, frames: 200, now: now)
/// ```
public struct SoundSharing: Sendable, Equatable {
    public struct Rules: Sendable, Equatable {
        /// Windows sent to every peer when listening starts.
        public var announce = 3
        /// The shortest time between two of this node's re-checks (`huddle run --sound-recheck`).
        public var recheckEvery: TimeSpan = .seconds(120)
        /// Windows in a re-check (4 s: the matcher needs 3 s of loud sound in common).
        public var recheckWindows = 2
        /// How long a listening, unplaced peer is sent every window: a budget per host that
        /// refills at this much an hour.
        public var placing: TimeSpan = .seconds(120)
        /// How long windows go out for placing, to anyone: a budget for everyone together that
        /// refills at this much an hour.
        public var placingTotal: TimeSpan = .seconds(180)
        /// The least budget a run of placing windows starts with.
        public var placingRun: TimeSpan = .seconds(30)
        /// A peer counts as listening this long after its last window.
        public var peerListening: TimeSpan = .seconds(30)

        /// `placing` (`huddle run --sound-placing`) sets the budget a host; everyone's is half as
        /// much again, and a run starts with a quarter of it (at most 30 s).
        public init(recheckEvery: TimeSpan = .seconds(120), placing: TimeSpan = .seconds(120)) {
            self.recheckEvery = recheckEvery
            self.placing = placing
            placingTotal = placing * 3 / 2
            placingRun = min(.seconds(30), placing / 4)
        }
    }

    /// Why the latest window went where it went.
    public enum Reason: String, Sendable, Equatable {
        case announcing, placing, rechecking
        /// Nobody needed it: it stayed on the machine.
        case kept
    }

    public let rules: Rules
    /// This node (its id breaks ties between listeners whose re-checks fell together).
    public let me: NodeID
    /// Own windows seen since listening started.
    public private(set) var windows = 0
    /// Seconds of own sound heard, and of those, seconds that left the node (to anyone).
    public private(set) var heardSeconds = 0.0
    public private(set) var sharedSeconds = 0.0
    /// Seconds of own sound each peer was sent.
    public private(set) var sharedWith: [NodeID: Double] = [:]
    /// Why the latest window went where it went, and to whom.
    public private(set) var reason = Reason.kept
    public private(set) var latestPeers: [NodeID] = []
    /// When this node's latest re-check began, and how many of its windows are still to go.
    private var lastRecheck: WallTime?
    private var recheckLeft = 0
    /// A step was heard: re-check as soon as half a period allows.
    private var recheckSoon = false
    /// When each peer's latest window came (kept for two re-check periods: the room's listeners
    /// are those that sent one since).
    private var lastWindow: [NodeID: WallTime] = [:]
    /// Each host's placing budget, when it was last topped up, where it is not full.
    private var placingLeft: [String: Budget] = [:]
    /// Everyone's placing budget.
    private var placingTotalLeft: Budget?
    private struct Budget: Sendable, Equatable {
        var left: TimeSpan
        var at: WallTime

        /// What is left at `now`, refilled at `full` an hour, never past `full`.
        func left(full: TimeSpan, now: WallTime) -> TimeSpan {
            min(full, left + TimeSpan.microseconds(Int64(Double((now - at).microseconds) * (full / .seconds(3_600)))))
        }
    }
    /// Hosts in a run of placing windows now.
    private var placing: Set<String> = []

    public init(me: NodeID, rules: Rules = Rules()) {
        self.me = me
        self.rules = rules
    }

    /// A window of `peer`'s own came (verified and opened) at `at`: it listens.
    public mutating func peerWindow(from peer: NodeID, at: WallTime) {
        lastWindow[peer] = max(at, lastWindow[peer] ?? at)
    }

    /// The peers among `peers` that this node's next window, of `frames` frames, goes to;
    /// `placed` says whether a peer's offset from this node is known (by sound or by marks), and
    /// `host` where it is (its address without the port: the ids at one host share a budget).
    public mutating func recipients(
        among peers: [NodeID], placed: (NodeID) -> Bool, host: (NodeID) -> String, frames: Int, now: WallTime
    ) -> [NodeID] {
        defer { windows += 1 }
        lastWindow = lastWindow.filter { now - $0.value <= max(rules.peerListening, rules.recheckEvery * 2) }
        let listening = lastWindow.filter { now - $0.value <= rules.peerListening }
        let seconds = Double(frames) / 100
        heardSeconds += seconds
        let reason: Reason
        var chosen: [NodeID]
        if windows < rules.announce {
            (reason, chosen) = (.announcing, peers)
        } else if recheckLeft > 0 || recheckIsSoon(now: now) || recheckIsDue(now: now, placed: placed) {
            if recheckLeft == 0 {
                lastRecheck = now
                recheckLeft = rules.recheckWindows
                recheckSoon = false
            }
            recheckLeft -= 1
            (reason, chosen) = (.rechecking, peers)
        } else {
            let wanting = peers.filter { listening[$0] != nil && !placed($0) }
            let hosts = spendPlacing(on: Set(wanting.map(host)), seconds: seconds, now: now)
            chosen = wanting.filter { hosts.contains(host($0)) }
            reason = .placing
        }
        (self.reason, latestPeers) = chosen.isEmpty ? (.kept, []) : (reason, chosen)
        if !chosen.isEmpty {
            sharedSeconds += seconds
            for peer in chosen { sharedWith[peer, default: 0] += seconds }
        }
        return chosen
    }

    /// The hosts among `hosts` that the next window, of `seconds`, goes to for placing: each
    /// whose budget (topped up first) holds the window and which is in a run or holds enough to
    /// start one, if everyone's budget holds it too. Takes the window from each of theirs, and
    /// once from everyone's.
    mutating func spendPlacing(on hosts: Set<String>, seconds: Double, now: WallTime) -> Set<String> {
        placing.formIntersection(hosts)
        let cost = TimeSpan.microseconds(Int64(seconds * 1_000_000))
        let full = rules.placing
        var left: [String: TimeSpan] = [:]
        for host in hosts {
            left[host] = placingLeft[host]?.left(full: full, now: now) ?? full
        }
        let total = placingTotalLeft?.left(full: rules.placingTotal, now: now) ?? rules.placingTotal
        var going = hosts.filter { host in
            left[host]! >= cost && (placing.contains(host) || left[host]! >= rules.placingRun)
        }
        if total < cost { going = [] }
        for host in hosts {
            var budget = left[host]!
            if going.contains(host) {
                budget = budget - cost
                placing.insert(host)
            } else {
                placing.remove(host)
            }
            placingLeft[host] = budget >= full ? nil : Budget(left: budget, at: now)
        }
        if !going.isEmpty {
            placingTotalLeft = Budget(left: total - cost, at: now)
        }
        return going
    }

    /// This node's matcher found a peer's lag moved by a step (a rebuffer, a catch-up): its next
    /// window starts a re-check if half a period has passed since its last, else the first that
    /// has.
    public mutating func stepHeard() {
        recheckSoon = true
    }

    func recheckIsSoon(now: WallTime) -> Bool {
        guard recheckSoon else { return false }
        return lastRecheck.map { now - $0 >= rules.recheckEvery / 2 } ?? true
    }

    /// Whether this node's turn to re-check has come: ``Rules/recheckEvery`` since its last, and
    /// its share of that since a placed peer last sent it sound (later still when a peer with a
    /// lower id re-checked with it last time: the two then take turns).
    func recheckIsDue(now: WallTime, placed: (NodeID) -> Bool) -> Bool {
        guard let last = lastRecheck else { return true }
        let placedListeners = lastWindow.filter { placed($0.key) }
        let turn = rules.recheckEvery / Int64(placedListeners.count + 1)
        let fellTogether = placedListeners.contains { $0.key < me && ($0.value - last).magnitude < turn / 2 }
        guard now - last >= rules.recheckEvery + (fellTogether ? turn : .zero) else { return false }
        guard let latest = placedListeners.values.max() else { return true }
        return now - latest >= turn
    }
}
