/// Everything that happens to a node, as its machine hears of it: the one door in
/// (``NodeMachine/handle(_:now:)``). What the world must do comes out of the one door out,
/// ``NodeMachine/pollEffects()``, and when to come back of ``NodeMachine/nextDeadline(now:)``.
///
/// Requests a person waits on for an answer are calls, not inputs: ``NodeMachine/say(_:inRoomNamed:now:)``,
/// ``NodeMachine/sendDirect(to:text:now:)`` and ``NodeMachine/controlLine(_:inRoomNamed:at:now:)``
/// answer with the event made or why not; ``NodeMachine/syncResponse(to:)`` answers a peer's pull
/// from the log; the views (``NodeMachine/consoleView(now:)``, the status) only read.
public enum NodeInput: Sendable {
    // MARK: Starting

    /// Brings back what the store held and joins `room` (a public name) or the private room `key`
    /// opens; `seeds` are peers to probe (`--peer`).
    case start(room: String?, key: RoomKey?, seeds: [PeerAddress])

    // MARK: The network

    /// A datagram's bytes as the socket gave them (past the shell's rate limit): decoded and
    /// checked by the machine.
    case datagram([UInt8], from: PeerAddress)
    /// A datagram already decoded (the simulator's network, a test playing a peer).
    case message(WireMessage, from: PeerAddress)
    /// A node that mDNS found, speaking wire protocol `protocolVersion` (its TXT record's `proto`):
    /// a peer if it is this build's (``WireProtocol/version``); otherwise nothing either sends the
    /// other can be read, and the reader is told who should update.
    case discovered(
        id: NodeID, nick: String, address: PeerAddress, rooms: [String], protocolVersion: Int = Int(WireProtocol.version))
    /// mDNS found nobody in its first seconds on: `ownAnnouncementSeen` when it brought this
    /// node's own announcement back (mDNS works here, and nobody else announces).
    case nobodyAnnounced(ownAnnouncementSeen: Bool)
    /// A batch of a pull came back (``NodeEffect/pull(_:first:)``).
    case pullBatch(PullRequest, events: [Event], more: Bool)
    /// The batch's signatures, checked (``NodeEffect/checkSignatures(_:_:more:)``).
    case pullChecked(PullRequest, valid: [Event], invalid: Int, more: Bool)
    /// A pull's connection failed or closed before the machine ended it.
    case pullFailed(PullRequest)
    /// Something the shell refused before the machine saw it (a TCP frame or connection).
    case dropped(NodeCounters.Drop, count: Int)

    // MARK: The store and the clock

    /// A turn's writes are on disk (``NodeEffect/commit(_:turn:)``).
    case committed(CommitTurn)
    /// Time passed: run what is due (``NodeMachine/nextDeadline(now:)``).
    case tick

    // MARK: The reader

    /// A line typed on the console (or sent by a paired page), at `at` on the wall clock (Enter).
    case consoleLine(String, at: WallTime, from: Face = .console)
    /// Enter on an empty line (a tap on Now), offered as a mark of `label`: at the console the
    /// label it offered when the key arrived (`nil`: none); a tap on the page's Now names none,
    /// and marks the moment on offer as it arrives. A tap happened `linkDelay` before it arrived
    /// (the page's link, half its median round trip: ``LinkDelay``); the mark is put back by it.
    case markOffered(String?, at: WallTime, from: Face = .console, linkDelay: TimeSpan = .zero)
    /// The viewer paused or resumed its stream.
    case pause(at: WallTime, from: Face = .console)
    case resume(at: WallTime, from: Face = .console)
    /// The answer to ``NodeEffect/askPassphrase(room:)``.
    case passphrase(PassphraseAnswer)
    /// Piped input ended: wait until a peer holds what this node wrote since it started
    /// (``DeliveryWait``); `peersFindable`: a `--peer` seed or mDNS could still bring one. Said
    /// again with `false` while it waits: mDNS turned out not to work here.
    case inputEnded(peersFindable: Bool)
    /// The node is stopping (a signal): a wait for delivery ends now, not sent.
    case stopping

    // MARK: Pictures

    /// The answer to ``NodeEffect/preparePicture(_:caption:room:face:)``: the picture, its blob
    /// stored, ready to go out in `room`, or why not.
    case picturePrepared(Result<Picture, PictureProblem>, room: String, from: Face?)
    /// A picture to send from a face that has its bytes (a paired page): as `/photo` with a file.
    case pictureOffered(PictureSource, caption: String, from: Face)
    /// Pictures the shell removed from disk to stay within its quota (their messages stay).
    case picturesRemoved([[UInt8]])
    /// What a ``NodeEffect/fetchPicture(_:)`` came to, by the picture it fetched.
    case pictureFetched(PictureIdentity, PictureFetchOutcome)

    // MARK: Listening

    /// The sound source started; its first sample counts as heard at `at`.
    case listeningStarted(source: String, at: WallTime)
    /// It stopped (`reason` is `nil` when a file played to its end), or could not start.
    case listeningStopped(reason: String?)
    case listeningFailed
    /// This node's own sound, as features from `start` on.
    case heardOwnSound(start: WallTime, bits: [UInt32], loud: [Bool])
    /// The matcher's answer about a peer's window.
    case soundMatched(NodeMachine.SoundAttempt)
}

extension NodeMachine {
    /// Runs `body` as the answer to what `face` asked: what it says goes back there
    /// (``NodeOutput/isAnswer``), and a confirmation is taken from there only.
    mutating func answering(_ face: Face, _ body: (inout NodeMachine) -> Void) {
        let outer = answering
        answering = face
        body(&self)
        answering = outer
    }

    /// Handles one input at one instant; then take what it caused with ``pollEffects()``.
    public mutating func handle(_ input: NodeInput, now: NodeTime) {
        switch input {
        case .start(let room, let key, let seeds): start(room: room, key: key, seeds: seeds, now: now)
        case .datagram(let bytes, let source): receive(datagram: bytes, from: source, now: now)
        case .message(let message, let source): receive(message, from: source, now: now)
        case .discovered(let id, let nick, let address, let rooms, let protocolVersion):
            discovered(id: id, nick: nick, address: address, rooms: rooms, protocolVersion: protocolVersion, now: now)
        case .nobodyAnnounced(let ownAnnouncementSeen): nobodyAnnounced(ownAnnouncementSeen: ownAnnouncementSeen)
        case .pullBatch(let pull, let events, let more): pullBatch(events, of: pull, more: more, now: now)
        case .pullChecked(let pull, let valid, let invalid, let more):
            pullChecked(valid, invalid: invalid, of: pull, more: more, now: now)
        case .pullFailed(let pull): pullFinished(pull)
        case .dropped(let drop, let count): countDropped(drop, count: count)
        case .committed(let turn): committed(turn)
        case .tick: tick(now: now)
        case .consoleLine(let line, let at, let face): answering(face) { $0.consoleLine(line, at: at, now: now) }
        case .markOffered(let label, let at, let face, let linkDelay):
            answering(face) { $0.markOffered(label, at: at - linkDelay, now: now) }
        // A pause is news on every face, wherever it was pressed: the one stream stopped.
        case .pause(let at, _): pause(at: at, now: now)
        case .resume(let at, _): resume(at: at, now: now)
        case .passphrase(let answer): passphraseEntered(answer, now: now)
        case .picturePrepared(let result, let room, let face):
            if let face { answering(face) { $0.picturePrepared(result, room: room, now: now) } }
            else { picturePrepared(result, room: room, now: now) }
        case .pictureFetched(let id, let outcome): pictureFetched(id, outcome, now: now)
        case .picturesRemoved(let roots): pictures.held.subtract(roots)
        case .pictureOffered(let source, let caption, let face):
            answering(face) { $0.preparePicture(source, caption: caption, now: now) }
        case .listeningStarted(let source, let at): listeningStarted(source: source, at: at, now: now)
        case .listeningStopped(let reason): listeningStopped(reason: reason, now: now)
        case .listeningFailed: listeningFailed()
        case .heardOwnSound(let start, let bits, let loud): heardOwnSound(start: start, bits: bits, loud: loud, now: now)
        case .soundMatched(let attempt): soundMatched(attempt, now: now)
        case .inputEnded(let peersFindable): inputEnded(peersFindable: peersFindable, now: now)
        case .stopping: stopWaiting()
        }
        // Whatever came in may be what a wait for delivery waited for (a digest, a pull's
        // batch, a peer found, its next ask or its deadline).
        pollDelivery(now: now)
    }
}
