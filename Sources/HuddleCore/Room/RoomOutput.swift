/// Something a room has to show its reader, in the order it happened on this node.
///
/// The shell renders these as text or JSON lines; the core decides *what* and *when*.
public enum RoomOutput: Equatable, Sendable {
    /// A chat message is shown now (after any hold-back).
    case message(ShownMessage)
    /// Messages and scores written before the reader joined, shown now in one block in game
    /// order: what a late joiner catches up on (see ``RoomSession/isEarlier(_:)``).
    case earlier([ShownItem])
    /// Someone proposed a calibration event: a prompt to mark it (`/now LABEL`). A name that
    /// could spoil ("safety") comes at the reader's moment, like a line (``SpoilerFreeMoment``).
    case calibrationEvent(label: String, by: Member)
    /// Someone the reader is not placed with marked or proposed a moment whose name could spoil:
    /// the name waits like a line, and this says only that a moment was marked, and what would
    /// place the reader. Once per member until the two are placed.
    case momentCue(by: Member)
    /// The shield grew to `to`: two placed streams (`ahead`, `behind`) run `apart`, farther than
    /// the shield covered (``HoldBackSchedule/shield``). Said to a reader who is not placed.
    case shieldGrew(to: TimeSpan, ahead: Member, behind: Member, apart: TimeSpan)
    /// Someone marked a calibration event when their clock read `at`.
    case mark(label: String, by: Member, at: WallTime)
    /// Someone took back their mark of a moment (`/unmark`).
    case unmarked(label: String, by: Member)
    /// A member's mark disagrees with the rest of its marks by more than a step: set aside until
    /// another mark confirms it (see ``Calibration/SuspectMark``).
    case markSetAside(Member, label: String)
    case joined(Member)
    case left(Member)
    /// The room's calibration changed: each member's offset (`nil` when not
    /// calibrated) and, for those connected to this node, how far their stream is behind it.
    case offsetsChanged(OffsetReport)
    /// A member signed two different events as its event `seq`: its events from `seq` on are
    /// dropped in this room, and it can post there no more.
    case equivocated(Member, seq: UInt64)
    /// The solver found a step in a member's lag (a rebuffer, a catch-up; see
    /// ``CalibrationSolver/stepThreshold``): its offset moved by `change` (positive: its stream
    /// fell further behind) and is now `offset`.
    case lagStepped(Member, change: TimeSpan, offset: TimeSpan, heard: Bool = false)
    /// A score reached the reader's stream (held back like a message).
    case score(ShownScore)
    /// Someone named the two sides.
    case teamsNamed(home: String, guest: String, by: Member)
    /// The bytes of a picture shown before they were all here arrived: show it now (the message
    /// as it was shown).
    case pictureArrived(ShownMessage)
    /// The reader, in the room, has no offset (it joined, or took back the mark that placed it):
    /// what others write waits `shield` after it was written, or shows at once with the shield
    /// off (`nil`). Said once each time the reader becomes unplaced.
    case unplaced(shield: TimeSpan?)
}

/// A shown message or score, as a late joiner's block (``RoomOutput/earlier(_:)``) lists them.
public enum ShownItem: Equatable, Sendable {
    case message(ShownMessage)
    case score(ShownScore)

    public var event: Event {
        switch self {
        case .message(let message): message.event
        case .score(let score): score.event
        }
    }

    /// The item's game time, `nil` while its writer is not calibrated.
    public var gameTime: WallTime? {
        get {
            switch self {
            case .message(let message): message.gameTime
            case .score(let score): score.gameTime
            }
        }
        set {
            switch self {
            case .message(var message):
                message.gameTime = newValue
                self = .message(message)
            case .score(var score):
                score.gameTime = newValue
                self = .score(score)
            }
        }
    }
}

/// A score at the moment it is shown, and the score that stands after it.
public struct ShownScore: Equatable, Sendable {
    public var event: Event
    public var from: Member
    public var home: UInt16
    public var guest: UInt16
    public var sentAt: WallTime { event.createdAt }
    public var shownAt: WallTime
    public var held: TimeSpan
    /// As ``ShownMessage/waited``.
    public var waited: TimeSpan = .zero
    /// The score's game time (sender's clock less its offset), `nil` while it is not calibrated.
    public var gameTime: WallTime?
    /// Whether a score of a later game moment stands already: this one is shown as a
    /// correction, and the standing score does not change.
    public var isCorrection: Bool
    /// The sides' names, if someone named them (`/teams`).
    public var homeName: String? = nil
    public var guestName: String? = nil
}

/// The score a reader's stream has reached: the one of the latest game moment shown so far.
public struct Scoreboard: Equatable, Sendable {
    public var home: UInt16
    public var guest: UInt16
    public var by: Member
    /// The game time (or, uncalibrated, the sender's time) it stands for.
    public var moment: WallTime
    /// The sides' names, if someone named them.
    public var teams: (home: String, guest: String)?

    public static func == (a: Scoreboard, b: Scoreboard) -> Bool {
        a.home == b.home && a.guest == b.guest && a.by == b.by && a.moment == b.moment
            && a.teams?.home == b.teams?.home && a.teams?.guest == b.teams?.guest
    }
}

/// A room member as the room log knows it: id and the nick from its latest join.
public struct Member: Hashable, Sendable {
    public var id: NodeID
    /// The nick from its latest join, as it chose it.
    public var nick: String
    /// Whether another node goes by the same nick (in the room, or first seen under it): then
    /// people see ``displayName``, nick and the start of the id, so nobody passes for another.
    public var sharesNick: Bool

    public init(id: NodeID, nick: String, sharesNick: Bool = false) {
        self.id = id
        self.nick = nick
        self.sharesNick = sharesNick
    }

    /// The nick, or `nick#3f9a0c1e` (the id's first eight hex digits: 32 bits, too many to find
    /// a key for by trial) when ``sharesNick``, or when the nick has a `#` of its own, so that
    /// no nick can pass for another's disambiguated name.
    public var displayName: String {
        sharesNick || nick.contains("#") ? "\(nick)#\(id.hex.prefix(8))" : nick
    }
}

/// A chat message at the moment it is shown.
public struct ShownMessage: Equatable, Sendable {
    public var event: Event
    public var from: Member
    /// What it says: a line's text, a picture's caption.
    public var text: String
    /// The sender's clock when it sent the message.
    public var sentAt: WallTime { event.createdAt }
    /// This node's clock when it was shown.
    public var shownAt: WallTime
    /// How long this node held it back (zero for messages shown on arrival).
    public var held: TimeSpan
    /// How long after it was written the reader sees it, when it was held (see
    /// ``HoldBackSchedule/Release/waited``): what the console says, "(held 3.0 s)".
    public var waited: TimeSpan = .zero
    /// The message's game time (sender's clock less its offset), `nil` while the sender is not
    /// calibrated.
    public var gameTime: WallTime?
    /// Whether its picture's bytes were not all on this node when it was shown: the line says so,
    /// and ``RoomOutput/pictureArrived(_:)`` shows the picture when they are.
    public var pictureMissing = false
    /// Whether its picture will not be fetched: it declares more than a node fetches, or it came
    /// past its writer's budget (``NodeMachine+Pictures``). The line says so.
    public var pictureRefused = false
    /// Whether its picture's blob is here but is not the picture its event says (the key does
    /// not open it, or what opens is another type or size): the node writes no file for it.
    public var pictureUnreadable = false

    /// The message's picture, if it has one.
    public var picture: Picture? { event.body.picture }
}

/// Offsets of a room's members after a calibration change.
public struct OffsetReport: Equatable, Sendable {
    public struct Entry: Equatable, Sendable {
        public var member: Member
        /// Offset from the group's reference (positive: behind). `nil`: not calibrated.
        public var offset: TimeSpan?
        /// How far this member's stream is behind the reader's (negative: ahead), when both are
        /// in the same calibrated group.
        public var behindReader: TimeSpan?
        /// What sound contributed to the member's offset: `nil` when it comes from marks alone.
        public var heard: Calibration.Placement.Sound? = nil
    }

    /// One entry per current member, sorted by nick then id.
    public var entries: [Entry]
    /// The members whose entry changed enough for a person to notice since the reader was last
    /// told (see ``isNoticeable(_:after:)``); scripts get every report, people only these.
    public var noticed: Set<NodeID> = []

    /// The smallest change in how far a member is behind the reader worth a line: a tenth of a
    /// second, under what a viewer can tell, over the jitter of a refit.
    public static let noticeableChange = TimeSpan.milliseconds(100)

    /// Whether `entry` is news after `told`: a member not told of yet, one calibrated or
    /// connected or no longer, or one whose lag behind the reader moved by
    /// ``noticeableChange`` or more.
    public static func isNoticeable(_ entry: Entry, after told: Entry?) -> Bool {
        // A member never placed is no news until it is ("carol is not calibrated yet" as soon
        // as bob marks told nothing).
        guard let told else { return entry.offset != nil }
        if (entry.offset == nil) != (told.offset == nil) { return true }
        switch (entry.behindReader, told.behindReader) {
        case (nil, nil): return false
        case (let now?, let before?): return (now - before).magnitude >= noticeableChange
        default: return true
        }
    }
}
