/// What a room event says. Times are not here: every event carries its origin's clock reading
/// (``Event/createdAt``), and for a ``mark(label:)`` that reading *is* the mark's time.
public enum EventBody: Hashable, Sendable {
    /// The origin joined the room under this nick. A join resets the origin's calibration: its
    /// earlier marks and delay nudges no longer count.
    case join(nick: String)
    /// The origin left the room; none of its marks count until it joins again.
    case leave
    /// A chat message.
    case chat(text: String)
    /// The origin proposes a calibration event (a moment everyone can see, such as "kickoff").
    /// Peers see it as a prompt to mark.
    case calibrationEvent(label: String)
    /// The origin saw the labelled moment on its stream when its clock read ``Event/createdAt``.
    case mark(label: String)
    /// The origin takes back its mark of the label (`/unmark`): of a node's marks and
    /// retractions of one label, the latest by seq decides, so a later mark counts again.
    case unmark(label: String)
    /// The origin nudges its own offset by this many milliseconds (positive: "my stream is later").
    case delayNudge(milliseconds: Int64)
    /// The body of an event of a private room as it travels: a nonce, then one of the bodies
    /// above sealed with the room's key (see ``RoomKey``). Only a node with the key can open it.
    case sealed(bytes: [UInt8])
    /// The score as the origin sees it on its stream: held back like a chat message, so each
    /// reader sees the score of its own stream's moment.
    case score(home: UInt16, guest: UInt16)
    /// The names of the two sides, for the scoreboard (not held back: names spoil nothing).
    case teams(home: String, guest: String)
    /// The origin matched its own sound against a peer's and found how much later the peer heard
    /// it: an edge between the two viewers for the solver, like both marking one unnamed moment
    /// (see ``HeardMatch``). Not held back, not shown in history. Boxed, like ``picture(_:)``:
    /// kept inline, the two largest bodies made every event's body 72 bytes instead of 33.
    indirect case heard(HeardMatch)
    /// A picture with its caption (``Picture``): a message like ``chat(text:)``, held back and
    /// listed in history the same way; its bytes are fetched apart (``PictureBlob``).
    indirect case picture(Picture)
    /// The origin's seqs from `from` up to this event's own, the ones a reader does not hold,
    /// will never come: the origin's machine lost power, and with it the events it had made in
    /// that stretch but not yet synced to disk (see ``SeqLease``). The log fills those seqs with
    /// holes (``RoomLog``); the events in the stretch a reader does hold stay. Shows nothing.
    case voided(from: UInt64)
}

extension EventBody {
    /// Whether this is a message, words or a picture (what history lists).
    public var isChat: Bool {
        switch self {
        case .chat, .picture: true
        default: false
        }
    }

    /// Whether this body is held back until the reader's stream reaches it: messages and scores.
    public var isHeldBack: Bool {
        switch self {
        case .chat, .picture, .score: true
        default: false
        }
    }

    /// Whether this is a score.
    public var isScore: Bool {
        if case .score = self { true } else { false }
    }

    /// The words of a message: a line's text, a picture's caption.
    public var messageText: String? {
        switch self {
        case .chat(let text): text
        case .picture(let picture): picture.caption
        default: nil
        }
    }

    /// The picture of a message that has one.
    public var picture: Picture? {
        if case .picture(let picture) = self { picture } else { nil }
    }

    /// Whether this is a private room's body not opened (yet).
    public var isSealed: Bool {
        if case .sealed = self { true } else { false }
    }
}
