/// A node whose input ended waits, a bounded time, until what it wrote has reached a peer: the
/// decision of when that is known, when to ask, and when to give up, as a pure state machine.
///
/// What it wrote is its latest event in each room it wrote in. A peer is known to hold it when
/// the peer's digest (its version vector) covers it, when an event the peer signed has it in its
/// causal context, or when a pull from the peer returns it (``heard(room:seq:from:)``). While some
/// room is not known to be held, every ``askInterval`` the node asks each live peer of that room
/// for its own events from that seq on (a pull: what comes back proves the peer has them). It
/// gives up at the deadline, or at once when no peer is known and none can turn up (no `--peer`,
/// no mDNS): waiting would change nothing.
///
/// The machine runs it (``NodeInput/inputEnded(peersFindable:)``): it polls the wait after each
/// input and at ``nextPoll``, and says how it ended as a ``NodeEffect/delivery(_:)``.
///
/// ```swift
/// var wait = DeliveryWait(written: ["superbowl": 3], now: t)
/// wait.poll(now: t, livePeers: ["superbowl": [bob]], peersPossible: true)   // .ask([...bob...])
/// wait.heard(room: "superbowl", seq: 3, from: "bob")
/// wait.poll(now: t + .milliseconds(80), livePeers: [:], peersPossible: true)   // .delivered(to: ["bob"])
/// ```
public struct DeliveryWait: Sendable {
    /// How long a node waits.
    public static let timeout = TimeSpan.seconds(5)
    /// How often live peers are asked.
    public static let askInterval = TimeSpan.milliseconds(500)

    /// This node's latest event in each room it wrote in.
    public let written: [String: UInt64]
    /// When waiting ends (on the caller's clock: the wall clock).
    public let deadline: WallTime
    /// The highest of this node's seqs a peer is known to hold, per room, and who.
    private var held: [String: UInt64] = [:]
    private var holders: [String] = []
    private var lastAsk: WallTime?
    /// The last poll found no live peer to ask.
    private var nobodyToAsk = false
    /// When the wait is next due a poll by the clock alone: the next ask, or the deadline when
    /// there is nobody to ask (a peer that turns up comes as an input, and is polled as it comes).
    public var nextPoll: WallTime {
        guard let lastAsk, !nobodyToAsk else { return deadline }
        return min(deadline, lastAsk + Self.askInterval)
    }

    /// What the node should do now.
    public enum Step: Equatable, Sendable {
        /// Every room's last event is held by a peer: these (nicks, first known first).
        case delivered(to: [String])
        /// Ask these peers for this node's events of `room` from `seq` on.
        case ask([Ask])
        /// Nothing to do; poll again soon.
        case wait
        /// Stop waiting: nothing is known to have reached a peer. Why, in words.
        case giveUp(Reason)
    }

    public enum Reason: Equatable, Sendable {
        /// The deadline passed.
        case timedOut
        /// No peer is known and none can be found.
        case noPeers
        /// The node was told to stop (SIGTERM, SIGINT) while it waited.
        case stopped
    }

    /// What the node tells its reader of the wait (``NodeEffect/delivery(_:)``): that it waits,
    /// then how it ended. The shell ends the run on an end.
    public enum Report: Equatable, Sendable {
        /// Waiting, at most this long.
        case waiting(TimeSpan)
        /// Nothing was written: nothing to wait for.
        case nothingWritten
        /// A peer holds the last event of every room: these (nicks, first known first).
        case delivered(to: [String])
        /// Nothing is known to have reached a peer; it is stored, and goes out on the next run.
        case notSent(Reason)

        /// Whether the wait is over.
        public var isEnd: Bool { if case .waiting = self { false } else { true } }
    }

    public struct Ask: Equatable, Sendable {
        public var room: String
        public var peer: Peer
        public var seq: UInt64

        public init(room: String, peer: Peer, seq: UInt64) {
            self.room = room
            self.peer = peer
            self.seq = seq
        }
    }

    /// Whether a peer could turn up that is not known yet: a `--peer` seed, or mDNS.
    public private(set) var peersFindable: Bool

    /// What could find a peer stopped working (mDNS said it cannot work here).
    public mutating func noPeerFindable() {
        peersFindable = false
    }

    /// Waiting for `written` (room → this node's latest seq there), from `now`.
    public init(written: [String: UInt64], now: WallTime, timeout: TimeSpan = Self.timeout, peersFindable: Bool = true) {
        self.written = written.filter { $0.value > 0 }
        deadline = now + timeout
        self.peersFindable = peersFindable
    }

    /// Rooms whose latest written event no peer is known to hold yet.
    public var missing: [String] {
        written.filter { (held[$0.key] ?? 0) < $0.value }.keys.sorted()
    }

    /// A peer (`nick`) is known to hold this node's events of `room` up to `seq`.
    public mutating func heard(room: String, seq: UInt64, from nick: String) {
        guard seq > (held[room] ?? 0) else { return }
        held[room] = seq
        if let target = written[room], seq >= target, !holders.contains(nick) { holders.append(nick) }
    }

    /// The next step at `now`, given each room's live peers and whether any peer can still turn
    /// up (`peersPossible`: a `--peer` seed, mDNS, or a peer already known).
    public mutating func poll(now: WallTime, livePeers: [String: [Peer]], peersPossible: Bool) -> Step {
        let missing = missing
        if missing.isEmpty { return .delivered(to: holders) }
        if !peersPossible { return .giveUp(.noPeers) }
        if now >= deadline { return .giveUp(.timedOut) }
        if let lastAsk, now - lastAsk < Self.askInterval { return .wait }
        let asks = missing.flatMap { room in
            (livePeers[room] ?? []).map { Ask(room: room, peer: $0, seq: written[room]!) }
        }
        nobodyToAsk = asks.isEmpty
        guard !asks.isEmpty else { return .wait }
        lastAsk = now
        return .ask(asks)
    }
}
