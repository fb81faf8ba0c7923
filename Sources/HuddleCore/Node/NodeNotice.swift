/// Something that happened to this node, or an answer to the reader, not yet in words: the
/// renderers (console text, JSON, the page) word it. Rooms are named as people name them.
public enum NodeNotice: Sendable, Equatable {
    /// The reader now types into `room` (`/join`, `/msg`).
    case talkingIn(room: String)
    /// The reader left `room`; it types into `nowIn`, if it is in another room.
    case left(room: String, nowIn: String?)
    /// A private room this node was in opened again with its passphrase.
    case reopened(room: String)
    /// `/private ROOM` was answered with no passphrase: nothing joined.
    case noPassphraseGiven(room: String)
    /// Private rooms this node is in but cannot open this run: their names, or how many when
    /// some names are unknown.
    case locked(names: [String], count: Int)
    /// `nick` is in a private room of that name with another passphrase, and others here share
    /// this node's.
    case otherPassphrase(nick: String, room: String)
    /// `nick` is reached only through `through` (`nil`: directly again).
    case route(nick: String, through: String?)
    /// A peer announces itself on this network but its address did not answer a probe in 10 s
    /// (``Unanswered``): a firewall, or a Wi-Fi that keeps devices apart. Said once a run a peer.
    case unanswered(Unanswered)
    /// Nobody announced itself on this network in discovery's first seconds, and nobody reached
    /// this node otherwise. `mdnsWorks`: this node's own announcement came back (so the others are
    /// elsewhere); otherwise multicast does not work on this machine.
    case alone(rooms: [String], mdnsWorks: Bool)
    /// `nick` announces itself at `address` but speaks wire protocol `theirs`, this node `ours`:
    /// they cannot talk until the older of the two is updated. Said once a run a node.
    case otherProtocol(nick: String, address: PeerAddress, theirs: Int, ours: Int)
    /// A direct message to `nick` waits behind `nick`'s shield: the two share no calibration.
    case directHeldByShield(nick: String)
    /// `/pause`; `alreadyFor` when the stream was paused already, for that long.
    case paused(alreadyFor: TimeSpan?)
    /// `/resume` while nothing was paused.
    case notPaused
    /// `/resume` after `span`: the offset grew by it in `rooms` (empty: placed nowhere).
    case resumed(after: TimeSpan, rooms: [String])
    /// `/listen` or `/listen off` that changes nothing: `source` when listening (`file`,
    /// `device`), `starting` while it starts.
    case listeningAlready(on: Bool, source: String?)
    /// `/ignore LABEL`: the reader will not be asked to mark it in `room`.
    case ignoring(label: String, room: String)
    /// The reader named a moment whose name could spoil ("safety"): it reaches others at their
    /// moment, and those not placed only as a cue (``SpoilerFreeMoment``). Said once a run.
    case namedMoment(label: String)
    /// A wild mark confirmed (``WildMark``): made at the first press, `at`, which was `ago` before
    /// the press that confirmed it.
    case markedAtFirstPress(label: String, room: String, at: WallTime, ago: TimeSpan)
    /// `/delay ±S` in `room`: `others`, the placed members and how far behind the reader each is
    /// now; `nil` while the reader is not placed (the nudge counts once it is).
    case delayed(by: TimeSpan, room: String, others: [Standing]?)
    /// `/history`: `count` messages of `room` follow (0: none yet), then ``historyEnd``.
    case historyStart(count: Int, room: String)
    case historyEnd
    /// `/who`: the room at a glance (`nil`: this node holds nothing of `room`).
    case who(room: String, RoomGlance?)
    /// `/rooms`: the reader's rooms, and the rooms seen on the network with who is in each.
    case rooms(RoomsGlance)
    /// `/status`: the status line as it stands.
    case status(StatusGlance)
}

/// Why a command did nothing, not yet in words.
public enum CommandProblem: Sendable, Equatable {
    /// The line or a name in it does not parse: the grammar's own words (``ConsoleCommand``,
    /// ``RoomName``).
    case invalid(String)
    /// The reader is in no room, and the command needs one.
    case noRoom
    /// The reader is not in `room`.
    case notIn(room: String)
    case blankLabel
    /// `/unmark LABEL` with no such mark of the reader's in `room`.
    case noMarkToTakeBack(label: String, room: String)
    /// `/now` (or Enter) with no moment on offer.
    case noMomentWaiting
    /// A message was refused: why (``RoomSession``'s words for a refused message).
    case notSent(String)
    /// `--room ROOM` names a private room of this node's, and this run has no passphrase.
    case privateNeedsPassphrase(room: String)
    /// Deriving the key from a passphrase failed.
    case keyFailed(room: String, why: String)
    /// Peers are in a private room of that name with another passphrase, and none shares this
    /// node's: this node's is probably the wrong one.
    case wrongPassphrase(room: String, nick: String)
    /// A peer offers a key for direct messages anyone could read them with (a low-order point).
    case weakDirectKey(nick: String, peer: NodeID)
    /// `/msg` refused (``PeerLookupError``).
    case direct(PeerLookupError)
    /// A command this face may not run (``NodeMachine/refusal(of:from:)``): `command` as typed.
    case notFrom(Face, command: String)
    /// A picture was not sent: why.
    case picture(PictureProblem)
}

/// A room as the reader glances at it: what the status line and `/who` are made of, as plain
/// values. The words are the renderers' (`RoomGlance+Words` in HuddleNode).
public struct RoomGlance: Sendable, Equatable {
    /// The room as people name it ("superbowl", "superbowl (private)", "@alice").
    public var label: String
    public var reader: NodeID
    /// Peers alive in the room.
    public var alivePeers: Int
    /// Whether the reader is placed in the room's calibration.
    public var readerPlaced: Bool
    /// How long words from writers the reader is not placed with wait (`nil`: shield off).
    public var shield: TimeSpan?
    /// Each member and where its stream stands against the reader's.
    public var entries: [OffsetReport.Entry]
    public var scoreboard: Scoreboard?
    /// Messages held back, and when the next is due (`nil`: none, or paused).
    public var heldBack: Int
    public var nextWake: WallTime?
    /// When the viewer paused its stream, while it is paused.
    public var pausedAt: WallTime?
    /// Each member's membership state, where it is a known peer.
    public var peerStates: [NodeID: PeerState] = [:]
    /// While the node listens: how many peers its sound is aligned with.
    public var heardPeers: Int?
    /// While the node listens: whether its latest window of sound left it (``SoundSharing``).
    public var sharingSound = false
    /// Whether the viewer asked to see how many messages wait (`--show-waiting`).
    public var showWaiting = false

    public init(
        session: RoomSession, label: String, alivePeers: Int, pausedAt: WallTime? = nil,
        peerStates: [NodeID: PeerState] = [:]
    ) {
        self.label = label
        reader = session.reader
        self.alivePeers = alivePeers
        readerPlaced = session.calibration.isCalibrated(session.reader)
        shield = session.shield
        entries = session.offsetReport.entries
        scoreboard = session.scoreboard
        heldBack = session.heldBackCount
        nextWake = session.nextWake
        self.pausedAt = pausedAt
        self.peerStates = peerStates
    }
}

/// The status line's makings: the current room at a glance (`nil`: in no room), a pause, and
/// the time it was made at (wall ms), for what counts up or down.
public struct StatusGlance: Sendable, Equatable {
    public var room: RoomGlance?
    public var pausedAt: WallTime?
    public var now: WallTime

    public init(room: RoomGlance?, pausedAt: WallTime?, now: WallTime) {
        self.room = room
        self.pausedAt = pausedAt
        self.now = now
    }
}

/// `/rooms`: the reader's rooms (the current one marked) and those seen on the network.
public struct RoomsGlance: Sendable, Equatable {
    public struct Seen: Sendable, Equatable {
        public var label: String
        public var nicks: [String]
    }
    public struct Joined: Sendable, Equatable {
        public var label: String
        public var current: Bool
    }
    public var joined: [Joined]
    public var seen: [Seen]
}

/// A member and how far behind the reader its stream is (negative: ahead).
public struct Standing: Sendable, Equatable {
    public var name: String
    public var behind: TimeSpan

    public init(name: String, behind: TimeSpan) {
        self.name = name
        self.behind = behind
    }
}
