/// Which of a listening node's windows of sound leave it, and for whom (docs/AUDIO.md, "What
/// leaves the machine"). Sound features say which words were said in the room (bench part 18: a
/// plain classifier names 4 of 5 keywords from them), so a node shares only what matching needs:
///
/// - **announcing**: the first ``Rules/announce`` windows after listening starts go to every
///   peer, so that peers which listen learn that this node does;
/// - **placing**: a peer that listens (a window of its own came within ``Rules/peerListening``)
///   and whose offset from this node is not known yet gets every window, for at most
///   ``Rules/placing`` (a pair that matches at all is placed within about 30 s; a peer watching
///   something else is not sent the room's sound for ever), counted afresh when it comes back
///   after two re-check periods without a window;
/// - **re-checking**: ``Rules/recheckWindows`` windows in a row to every peer, at most once every
///   ``Rules/recheckEvery``, so that a rebuffer or a drift shows and a peer that started
///   listening unseen hears of this one. The listeners of a room take turns: a node waits until
///   no placed peer has sent it sound for `recheckEvery / (placed listeners + 1)` (a listener:
///   a peer that sent a window within two re-check periods), so with two listeners a re-check
///   crosses the pair about every 60 s, with four every 30 s, while each node still shares 4 s
///   in 120;
/// - nothing else.
///
/// Once a pair is placed, at most 4 s of every 120 s leave the node: 120 s of room sound an
/// hour. Pure: the machine asks with each window, and the answer depends only on what it was
/// told.
///
/// ```swift
/// var sharing = SoundSharing(me: aliceID)
/// sharing.peerWindow(from: bob, at: now)                       // bob listens too
/// let to = sharing.recipients(among: [bob, carol], placed: { _ in false }, frames: 200, now: now)
/// ```
public struct SoundSharing: Sendable, Equatable {
    public struct Rules: Sendable, Equatable {
        /// Windows sent to every peer when listening starts.
        public var announce = 3
        /// The shortest time between two of this node's re-checks (`huddle run --sound-recheck`).
        public var recheckEvery: TimeSpan = .seconds(120)
        /// Windows in a re-check (4 s: the matcher needs 3 s of loud sound in common).
        public var recheckWindows = 2
        /// How long a listening, unplaced peer is sent every window.
        public var placing: TimeSpan = .seconds(120)
        /// A peer counts as listening this long after its last window.
        public var peerListening: TimeSpan = .seconds(30)

        public init(recheckEvery: TimeSpan = .seconds(120)) {
            self.recheckEvery = recheckEvery
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
    public private(set) var lastRecheck: WallTime?
    private var recheckLeft = 0
    /// When each peer's latest window came (kept for two re-check periods: the room's listeners
    /// are those that sent one since).
    private var lastWindow: [NodeID: WallTime] = [:]
    /// Since when each listening, unplaced peer has been sent every window.
    private var placingSince: [NodeID: WallTime] = [:]

    public init(me: NodeID, rules: Rules = Rules()) {
        self.me = me
        self.rules = rules
    }

    /// A window of `peer`'s own came (verified and opened) at `at`: it listens.
    public mutating func peerWindow(from peer: NodeID, at: WallTime) {
        lastWindow[peer] = max(at, lastWindow[peer] ?? at)
    }

    /// The peers among `peers` that this node's next window, of `frames` frames, goes to;
    /// `placed` says whether a peer's offset from this node is known (by sound or by marks).
    public mutating func recipients(
        among peers: [NodeID], placed: (NodeID) -> Bool, frames: Int, now: WallTime
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
        } else if recheckLeft > 0 || recheckIsDue(now: now, placed: placed) {
            if recheckLeft == 0 {
                lastRecheck = now
                recheckLeft = rules.recheckWindows
            }
            recheckLeft -= 1
            (reason, chosen) = (.rechecking, peers)
        } else {
            chosen = peers.filter { peer in
                if placed(peer) { placingSince[peer] = nil }
                guard listening[peer] != nil, !placed(peer) else { return false }
                let since = placingSince[peer] ?? now
                placingSince[peer] = since
                return now - since < rules.placing
            }
            reason = .placing
        }
        // A peer gone quiet for two re-check periods is placed afresh when it comes back.
        placingSince = placingSince.filter { lastWindow[$0.key] != nil }
        (self.reason, latestPeers) = chosen.isEmpty ? (.kept, []) : (reason, chosen)
        if !chosen.isEmpty {
            sharedSeconds += seconds
            for peer in chosen { sharedWith[peer, default: 0] += seconds }
        }
        return chosen
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
