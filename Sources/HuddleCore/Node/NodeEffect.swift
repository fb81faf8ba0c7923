/// What a ``NodeMachine`` asks the world to do. The machine decides; whoever runs it (the `Node`
/// actor on sockets and SQLite, the simulator on a virtual network) carries these out, in order.
public enum NodeEffect: Sendable, Equatable {
    /// Send one datagram to each address (one encoding for all of them). Probes and acks are
    /// already signed.
    case send(WireMessage, to: [PeerAddress])
    /// Send these bytes as one datagram: a relay around a message for a peer reached only
    /// through another (``RelayMessage``), or one forwarded untouched for two peers of this node.
    case datagram([UInt8], to: PeerAddress)
    /// Pull a room from a peer over TCP (``PullRequest``): open a connection and send `first`;
    /// answer with ``NodeInput/pullBatch(_:events:more:)`` (see `NodeMachine+Pulls`).
    case pull(PullRequest, first: SyncRequest)
    /// Check these events' signatures (on every core), then answer with
    /// ``NodeInput/pullChecked(_:valid:invalid:more:)``.
    case checkSignatures(PullRequest, [Event], more: Bool)
    /// Send the pull's next request on its connection.
    case pullNext(PullRequest, SyncRequest)
    /// The pull is over: close its connection.
    case pullDone(PullRequest)
    /// Write to the store, in the order handed over, without waiting for it.
    case persist(StoreWrite)
    /// Commit these writes, then report ``NodeInput/committed(_:)`` with `turn`: what else the
    /// input caused waits for it (``CommitGate``).
    case commit([StoreWrite], turn: CommitTurn)
    /// What waited for `turn`'s commit, now due: carry it out, in order.
    indirect case afterCommit(CommitTurn, [NodeEffect])
    /// Something for the reader: on every face (`nil`), or the answer to what one face asked
    /// (``Face``, ``NodeOutput/isAnswer``).
    case output(NodeOutput, to: Face? = nil)
    /// The rooms to announce over mDNS changed (joined rooms but direct ones).
    case advertise(rooms: [String])
    /// The peers that signed their own word to this node changed: their addresses are exempt
    /// from the shell's rate limit (``DatagramRateLimits``) and are who a goodbye goes to, at
    /// `incarnation`.
    case vouchedPeers(Set<PeerAddress>, incarnation: UInt64)
    /// A datagram was refused before it was read (budget, size, undecodable): counted already;
    /// said for the log.
    case refused(NodeCounters.Drop, reason: String, from: PeerAddress)
    /// `/private ROOM`: ask the reader for the room's passphrase, then call
    /// ``NodeInput/passphrase(_:)``.
    case askPassphrase(room: String)
    /// `/quit`.
    case quit
    /// `/web`, `/web devices`, `/web revoke NAME`: the shell serves the phone's page.
    case web(ConsoleCommand.WebCommand)
    /// `/listen` (`true`) or `/listen off`: start or stop listening; the shell owns the sound
    /// source and answers with ``NodeInput/listeningStarted(source:at:)`` or
    /// ``NodeInput/listeningStopped(reason:)``.
    case listen(Bool)
    /// A peer's sound window, verified and opened: hand it to the matcher, stamped with when it
    /// arrived on this node's clock (ms).
    case hear(SoundWindow, receivedAt: WallTime)
    /// `/photo`: read (or take) the picture, strip what says where and when it was taken, check
    /// its header, seal and store its blob; answer with ``NodeInput/picturePrepared(_:room:from:)``
    /// for `face`.
    case preparePicture(PictureSource, caption: String, room: String, face: Face?)
    /// Fetch a picture's blob from its sources, checking every chunk; answer with
    /// ``NodeInput/pictureFetched(_:_:)``.
    case fetchPicture(PictureFetch)
    /// `/open N`: the Nth picture the console showed, in the desktop's viewer.
    case openPicture(Int)
    /// `/doctor`: the shell checks the machine and its network, and answers `face`.
    case doctor(Face)
    /// Where the wait for delivery stands (``NodeInput/inputEnded(peersFindable:)``): the shell
    /// tells the reader, and ends the run when it ended.
    case delivery(DeliveryWait.Report)
}

/// A write to the node's store. The store keeps, across restarts, what the machine is given
/// back in ``NodeRestore``.
public enum StoreWrite: Sendable, Equatable {
    /// Events to keep. `own`: this node's own event, committed before anyone sees it (so a
    /// `kill -9` never makes the node sign another event with its seq); a power cut is the
    /// lease's to answer for (``lease(room:through:)``).
    case events([Event], own: Bool)
    /// This node may use its seqs in `room` up to `through` (``SeqLease``): synced to disk (not
    /// only committed) before any event it covers leaves the node.
    case lease(room: String, through: UInt64)
    /// Messages shown to the reader at `at` (wall ms): never shown again after a restart.
    case shown([EventID], room: String, at: WallTime)
    /// A proof that an origin equivocated.
    case fault(Equivocation)
    /// Events a room dropped for good.
    case delete([EventID], room: String)
    /// Whether this node is in `room`.
    case joined(String, Bool)
    /// The room the reader types into.
    case currentRoom(String?)
    /// A private room's name, by its wire id.
    case privateRoomName(id: String, name: String)
    /// The first node seen under a nick.
    case nick(String, NodeID, at: WallTime)
    /// A phone or tablet paired with the node's page (``WebPairing``).
    case webDevice(WebDevice)
    /// A paired device revoked (`/web revoke NAME`), by id.
    case webDeviceRevoked(id: String)
}

/// A pull of one room from one peer. A recheck also asks again for `recheck`'s events from seq
/// `from` on, though they are held, to compare them (``ReplicationDirective/recheck``).
public struct PullRequest: Hashable, Sendable {
    public var room: String
    public var peer: NodeID
    /// The peer's sync (TCP) address.
    public var address: PeerAddress
    public var recheck: NodeID?
    public var from: UInt64
    /// Asked by a node waiting to know its events reached the peer (``DeliveryWait``), not by
    /// ``Replication``.
    public var confirm: Bool
    /// Which run of the pull this is, set when it starts: the same pull run again later is
    /// another (so an old connection's end cannot end the new one).
    public internal(set) var serial: UInt64 = 0

    public init(
        room: String, peer: NodeID, address: PeerAddress, recheck: NodeID? = nil, from: UInt64 = 1,
        confirm: Bool = false
    ) {
        self.room = room
        self.peer = peer
        self.address = address
        self.recheck = recheck
        self.from = from
        self.confirm = confirm
    }
}

/// A line for the reader, not yet in words: the shell renders it (text or JSON).
public enum NodeOutput: Sendable, Equatable {
    /// What a room showed, with how to name the room.
    case room(RoomOutput, RoomLine)
    /// A peer's membership state changed (`left`: it said goodbye).
    case peer(id: NodeID, nick: String, state: PeerState, left: Bool)
    /// A second node under a nick first seen with another.
    case nickConflict(Member, knownID: NodeID)
    /// One message of `/history`.
    case history(Event, from: Member, gameTime: WallTime?, room: String)
    /// Something that happened to this node ("* now talking in superbowl"), or an answer to a
    /// command (`/who`, `/rooms`, `/status`).
    case notice(NodeNotice)
    /// `/help` (the short list) or `/help all`.
    case help(all: Bool)
    /// Why a command did nothing.
    case problem(CommandProblem)
    /// Listening began: the source (`file` or `device`) and the node-clock time (ms) its first
    /// sample counts as heard.
    case listening(source: String, startedAt: WallTime)
    /// Listening ended; `reason` is `nil` when a file played to its end.
    case listeningStopped(reason: String?)
    /// The shield as it stands (`nil`: off); `changed`: the reader just set it.
    case shield(TimeSpan?, changed: Bool)
    /// A mark that would move the reader far was not made: the reader is asked to press again
    /// (see ``WildMark``). `room` as people name it; `proposedAgo`: how long ago the moment was
    /// proposed, when it was.
    case confirmMark(WildMark, room: String, proposedAgo: TimeSpan?)
}

/// How a room's output names the room for the reader.
public struct RoomLine: Sendable, Equatable {
    /// The room's wire name (a private room's id).
    public var room: String
    /// What people call it: "superbowl", "@alice", "private room ~abcde".
    public var name: String
    /// The name with "(private)" after a private room this node reads: "superbowl (private)",
    /// apart from a public superbowl. Text says this; JSON says ``name`` and ``isPrivate``.
    public var label: String
    public var isPrivate: Bool
    public var isCurrent: Bool
    /// In a direct room, whom a message went to.
    public var directTo: String?
}
