/// Traffic counters a node reports in `huddle status`.
public struct NodeCounters: Sendable {
    public init() {}

    public var packetsIn = 0
    public var packetsOut = 0
    /// Everything dropped, one per datagram, frame, connection or event, by why. Events a room
    /// gave up on after waiting are counted by the room (``RoomSession/tally``), not here.
    public var drops: [Drop: Int] = [:]
    public var eventsReceived = 0
    /// Sound windows sent to peers and taken from them (``SoundWindow``).
    public var soundWindowsOut = 0
    public var soundWindowsIn = 0
    /// Datagrams not sent: to an address that has not proven itself, past the credit of whoever
    /// named it (``SendCredit``).
    public var withheld = 0

    /// Everything dropped but copies of events already held (UDP gossip delivers many of those,
    /// and they cost nothing).
    public var rejected: Int { drops.filter { $0.key != .duplicate }.values.reduce(0, +) }

    /// Peers speaking a newer wire protocol (also in `rejected`).
    public var newerProtocol: Int { drops[.newerProtocol] ?? 0 }

    public mutating func count(_ drop: Drop, _ n: Int = 1) {
        guard n > 0 else { return }
        drops[drop, default: 0] += n
    }

    /// Why something a peer sent was dropped. The raw values are the keys of `huddle status`'s
    /// `drops` object.
    public enum Drop: String, Sendable, CaseIterable {
        /// A datagram or frame that does not decode.
        case malformed
        /// A datagram over the 60 000 bytes a node sends.
        case oversized
        /// A message of a newer wire protocol (this node should be upgraded).
        case newerProtocol = "newer_protocol"
        /// A message of an older wire protocol (the peer should be upgraded).
        case olderProtocol = "older_protocol"
        /// A message that makes no sense where it arrived (a sync message by UDP, say).
        case misplaced
        /// An event whose signature does not verify.
        case badSignature = "bad_signature"
        /// An event of a room this node is not in.
        case notJoined = "not_joined"
        /// A sound window while this node is not listening: not read.
        case notListening = "not_listening"
        /// A sound window from a node that is not a live peer in the window's room.
        case unknownSender = "unknown_sender"
        /// A sound window past its sender's budget (one a second, bursts of four) or everyone's
        /// (eight a second): dropped, its signature checked, before its seal is opened
        /// (``NodeMachine/soundWindowBudget``).
        case soundBudget = "sound_budget"
        /// A signed sound window sent more than 5 minutes from now, or not after its sender's last
        /// one taken: a replay.
        case soundReplayed = "sound_replayed"
        /// An event of a private room this node is in that the room's key does not open: sealed
        /// with another passphrase's key, tampered with, or not sealed at all (and a sealed event
        /// in a public room).
        case unreadable
        /// A copy of an event already held (also copies within one datagram).
        case duplicate
        /// An event whose seq is 0 or whose context does not follow its origin's previous event.
        case invalid
        /// An event too far past the gap in its origin's seqs.
        case tooFarAhead = "too_far_ahead"
        /// An event over a buffering budget (per origin, per stranger, per room, per node).
        case overBudget = "over_budget"
        /// An event from a stranger's address past its budget of signature checks: dropped
        /// unchecked.
        case checkBudget = "check_budget"
        /// An event from one origin too many in a room.
        case tooManyOrigins = "too_many_origins"
        /// An event of an origin quarantined for equivocation, at or past its proven seq.
        case quarantined
        /// A second version of an event from an origin that never joined: no proof is kept.
        case strangerConflict = "stranger_conflict"
        /// A sync connection refused: too many at once, or too many from one address.
        case syncBusy = "sync_busy"
        /// A sync connection closed for sending too slowly, or breaking the protocol.
        case syncBroken = "sync_broken"
        /// A relay datagram this node would not forward or take (``RelayRefusal``): from a
        /// stranger, to a stranger, of a room the two do not share, or over the relay budget.
        case relayRefused = "relay_refused"
        /// A peer's X25519 key for direct messages of small order: it would give a room key
        /// anyone can compute, so there is no direct room with that peer.
        case weakAgreementKey = "weak_agreement_key"
        /// A picture that declares more bytes or pixels than a node fetches: refused unread.
        case pictureTooLarge = "picture_too_large"
        /// A picture past its writer's byte budget: not fetched.
        case pictureBudget = "picture_budget"
        /// A piece of a picture's blob that did not match its hash: dropped, asked elsewhere.
        case pictureMismatch = "picture_mismatch"
        /// A stranger's picture past the few kept until it is vouched for.
        case pictureParked = "picture_parked"

        public init(_ rejection: RoomLog.Rejection) {
            switch rejection {
            case .wrongRoom: self = .misplaced
            case .zeroSequence, .inconsistentContext, .invalidVoid: self = .invalid
            case .tooFarAhead: self = .tooFarAhead
            case .quarantined: self = .quarantined
            case .overBudget: self = .overBudget
            case .tooManyOrigins: self = .tooManyOrigins
            case .strangerConflict: self = .strangerConflict
            }
        }
    }
}
