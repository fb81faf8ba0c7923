/// Listening (docs/AUDIO.md): the shell owns the sound source and the matcher, which run on
/// threads of their own; the machine decides what goes on the wire and what becomes an event.
///
/// - Own sound, 2 s at a time (``heardOwnSound(start:bits:loud:now:)``), goes to the peers
///   ``SoundSharing`` names (while placing a pair, then brief re-checks), each once, as a signed
///   ``SoundWindow`` sealed for that peer alone with the pair's key. Direct rooms are left out:
///   their two people share a room, and its windows serve both.
/// - A peer's window (``receive(_:from:now:)``) is taken only while listening, from a live
///   peer of the room, signed, and opened with the pair's key; it goes to the matcher as
///   ``NodeEffect/hear(_:receivedAt:)``.
/// - A match (``soundMatched(_:now:)``) becomes a `heard` event in every room the two share,
///   when ``HeardPublishing`` says it is news.
extension NodeMachine {
    /// What listening keeps across sources (a source comes and goes with `/listen`).
    struct Hearing: Sendable {
        /// How many peers' sound windows are opened (``soundWindowBudget``).
        var budget = NodeMachine.soundWindowBudget
        /// The `sentAt` of each peer's latest window taken (within ``soundWindowFreshness``): one
        /// not after it is a replay.
        var lastSentAt: [NodeID: WallTime] = [:]
        /// Whether the reader's latest word was to listen (`/listen`, `--listen`) rather than
        /// not: a source takes a while to start, and what was asked last is what counts.
        var wanted = false
        /// How listening shares sound (``NodeSetup/soundSharing``).
        let rules: SoundSharing.Rules
        /// When an aligned match is news enough to become a `heard` event.
        var publishing = HeardPublishing()
    }

    /// What listening looks like on this node: `huddle status`'s `listening`.
    public struct Listening: Sendable, Equatable {
        /// `file` or `device`.
        public var source: String
        /// Node-clock ms its first sample counts as heard.
        public var startedAt: WallTime
        /// The latest match tried with each peer.
        public var attempts: [NodeID: SoundAttempt] = [:]
        /// What of the sound leaves the node, and to whom.
        public var sharing: SoundSharing
        /// The latest aligned lag with each peer.
        var lags: [NodeID: TimeSpan] = [:]
    }

    /// One match of this node's sound against a peer's, as the matcher reports it.
    public struct SoundAttempt: Sendable, Equatable {
        public var peer: NodeID
        /// `aligned`, `not enough sound`, `ambiguous`, … (the matcher's words).
        public var verdict: String
        /// How much later the peer heard the same sound, µs of the two node clocks, when aligned.
        public var lag: TimeSpan?
        /// The match's standard score.
        public var confidence: Double
        /// The match as a `heard` event's body, when aligned.
        public var heard: HeardMatch?

        public init(peer: NodeID, verdict: String, lag: TimeSpan?, confidence: Double, heard: HeardMatch?) {
            self.peer = peer
            self.verdict = verdict
            self.lag = lag
            self.confidence = confidence
            self.heard = heard
        }
    }

    // MARK: Starting and stopping

    /// `/listen` or `/listen off`. What the reader asked last is what the node ends up doing,
    /// however quickly the commands come: a source takes a while to open, so the machine goes by
    /// what was asked (`hearing.wanted`), not only by what has started, and the shell carries
    /// the requests out in the order they were made.
    mutating func listenCommand(_ on: Bool) {
        switch (on, hearing.wanted, listening) {
        case (true, true, let now?): say(.listeningAlready(on: true, source: now.source))
        case (true, true, nil): say(.listeningAlready(on: true, source: nil))
        case (false, false, nil): say(.listeningAlready(on: false, source: nil))
        default:
            hearing.wanted = on
            emit(.listen(on))
        }
    }

    /// The source started: its first sample counts as heard at `at` (node-clock ms).
    mutating func listeningStarted(source: String, at: WallTime, now: NodeTime) {
        listening = Listening(source: source, startedAt: at, sharing: SoundSharing(me: identity.id, rules: hearing.rules))
        hearing.wanted = true
        show(.listening(source: source, startedAt: at))
    }

    /// The source stopped: `reason` says why (`nil`: a file played to its end).
    mutating func listeningStopped(reason: String?, now: NodeTime) {
        hearing.wanted = false
        guard listening != nil else { return }
        listening = nil
        show(.listeningStopped(reason: reason))
    }

    /// The source asked for could not start (the shell said why): nothing is listening.
    mutating func listeningFailed() {
        hearing.wanted = false
    }

    // MARK: Own sound

    /// The next 2 s of what this node heard (frames from `start`, node-clock ms): sealed for, and
    /// sent to, each peer ``SoundSharing`` names among the live peers of the joined rooms, once a
    /// peer, in the first room (by id) the two share, along the peer's route. A peer with no pair
    /// key (it offered no agreement key) is sent nothing.
    mutating func heardOwnSound(start: WallTime, bits: [UInt32], loud: [Bool], now: NodeTime) {
        guard var listening, bits.count == loud.count, !bits.isEmpty else { return }
        var shared: [NodeID: (room: String, peer: Peer)] = [:]
        for room in joined.sorted() where rooms[entry: room].directPeer == nil {
            for peer in roomPeers(room) where shared[peer.id] == nil && directRoom(with: peer.id) != nil {
                shared[peer.id] = (room, peer)
            }
        }
        let me = identity.id
        let placed = { (peer: NodeID) in
            self.joined.contains { self.rooms[$0]?.calibration.areConnected(me, peer) == true }
        }
        let recipients = listening.sharing.recipients(
            among: shared.keys.sorted(), placed: placed, host: { shared[$0]?.peer.address.host ?? "" }, frames: bits.count,
            now: now.wall)
        self.listening = listening
        for id in recipients {
            guard let (room, peer) = shared[id], let key = directRoom(with: id).flatMap({ rooms[entry: $0].key }) else { continue }
            let bytes = SoundWindow.made(
                by: identity, room: room, for: id, pairKey: key, sentAt: now.wall, start: start, bits: bits, loud: loud
            ).encoded()
            // Along the peer's route: through a relay where the two cannot reach each other.
            if case .via(_, let relay) = membership.route(to: id),
                let wrapped = RelayMessage(from: identity.id, to: id, payload: bytes)
            {
                transmit(wrapped.encoded(), to: relay)
            } else {
                transmit(bytes, to: peer.address)
            }
        }
        counters.soundWindowsOut += recipients.count
    }

    // MARK: Peers' sound

    /// How many sound windows this node opens, per sender and in all: a listening node sends a
    /// peer at most one 2 s window every 2 s (three at once when it starts listening), so more
    /// than one a second (bursts of four) is a flood, dropped before its seal is opened or it
    /// reaches the matcher (`sound_budget`); eight a second from everyone together (bursts of 16).
    /// Round 3: 16 member identities flooding windows took a node from 2 % to 51 % of a core.
    /// Spent only by windows whose signature holds: forged windows "from bob", spending bob's
    /// budget, kept a pair from aligning for good (issue 45); the signature checks themselves
    /// come from the source address's budget.
    public static let soundWindowBudget = RateBudget(perPeer: 1, total: 8, burst: .seconds(4), totalBurst: .seconds(2))

    /// How far a window's `sentAt` may be from this node's clock: a window sent longer ago is a
    /// replay (or from a clock this far off, which matching could not use anyway).
    public static let soundWindowFreshness = TimeSpan.seconds(300)

    /// A peer's sound window from `source`: taken only while listening, from a live peer of a
    /// joined room whose join there was delivered, within the source's budget of signature
    /// checks, signed by its sender, sent within ``soundWindowFreshness`` of now and after the
    /// sender's last window taken (a replay is refused), within the sender's
    /// ``soundWindowBudget``, and opened with the pair's key. Anything else is counted and dropped.
    mutating func receive(_ window: SoundWindow, from source: PeerAddress, now: NodeTime) {
        counters.packetsIn += 1
        membership.arrived(window.encodedByteCount, from: source)
        take(window, from: source, now: now)
    }

    /// A peer's sound window, directly or through a relay (`source`, whose budget of signature
    /// checks it spends): see ``receive(_:from:now:)``.
    mutating func take(_ window: SoundWindow, from source: PeerAddress, now: NodeTime) {
        guard listening != nil else { return countDropped(.notListening) }
        guard joined.contains(window.room), rooms[entry: window.room].directPeer == nil else { return countDropped(.notJoined) }
        guard window.from != identity.id,
            membership.alivePeers(inRoom: window.room).contains(where: { $0.id == window.from }),
            rooms[window.room]?.members.contains(where: { $0.id == window.from }) == true
        else { return countDropped(.unknownSender) }
        guard signatureChecks(1, from: source, now: now) == 1 else { return countDropped(.checkBudget) }
        guard window.hasValidSignature else {
            badSignatures(1, from: source, now: now)
            return countDropped(.badSignature)
        }
        guard (window.sentAt - now.wall).magnitude <= Self.soundWindowFreshness,
            hearing.lastSentAt[window.from].map({ window.sentAt > $0 }) ?? true
        else { return countDropped(.soundReplayed) }
        guard hearing.budget.admit(window.from, now: now.monotonic) else { return countDropped(.soundBudget) }
        hearing.lastSentAt = hearing.lastSentAt.filter { now.wall - $0.value <= Self.soundWindowFreshness }
        hearing.lastSentAt[window.from] = window.sentAt
        guard let pairRoom = directRoom(with: window.from),
            let opened = rooms[entry: pairRoom].key?.open(window, for: identity.id), opened.isOpen
        else { return countDropped(.unreadable) }
        counters.soundWindowsIn += 1
        listening?.sharing.peerWindow(from: window.from, at: now.wall)
        emit(.hear(opened, receivedAt: now.wall))
    }

    // MARK: Matches

    /// The matcher tried this node's sound against a peer's. An aligned match is published as
    /// a `heard` event in every joined room the peer is a member of, when it is news
    /// (``HeardPublishing``).
    mutating func soundMatched(_ attempt: SoundAttempt, now: NodeTime) {
        guard listening != nil else { return }
        listening?.attempts[attempt.peer] = attempt
        guard let heard = attempt.heard else { return }
        if let before = listening?.lags[attempt.peer], (heard.lag - before).magnitude >= CalibrationSolver.heardStepThreshold {
            // A step: this node's own sound, matched by the others, tells whose stream moved.
            listening?.sharing.stepHeard()
        }
        listening?.lags[attempt.peer] = heard.lag
        let shared = joined.filter { room in
            rooms[entry: room].directPeer == nil && rooms[room]?.members.contains(where: { $0.id == attempt.peer }) == true
        }
        guard !shared.isEmpty, hearing.publishing.shouldPublish(heard, now: now.wall) else { return }
        for room in shared {
            originate(.heard(heard), in: room, now: now)
        }
    }
}
