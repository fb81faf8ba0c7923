/// A running node's state as `huddle status` shows it: the node, its peers, its rooms and its
/// traffic counters. Encoded as JSON over the control socket and by `huddle status --json`.
public struct NodeStatus: Codable, Sendable, Equatable {
    public struct Node: Codable, Sendable, Equatable {
        public var id: String
        public var nick: String
        public var port: Int
        public var addresses: [String]
        public var uptimeMs: Int64
        public var dataDir: String
        /// How long the viewer's stream has been paused (`/pause`), if it is.
        public var pausedMs: Int64? = nil
        /// The one interface it announces and browses on (`--interface`), if it was given one.
        public var interface: String? = nil
        /// Whether it announces itself and browses over mDNS: "on", "off" (`--no-mdns`) or
        /// "unavailable" (no daemon answered when it started). Absent from a node before stop 65.
        public var mdns: String? = nil
    }

    public struct Peer: Codable, Sendable, Equatable {
        public var id: String
        public var nick: String
        /// The nick as people see it: `nick#3f9a0c1e` when another node goes by it too, or when
        /// it was first seen with another node (see ``Member/displayName``).
        public var displayName: String? = nil
        /// Where its datagrams come from and this node's go (behind a NAT, the router's mapping).
        public var address: String
        /// Where pulls go over TCP, when that is not ``address``: its host at the port the peer
        /// announces (behind a NAT, only a forwarded port answers there).
        public var syncAddress: String? = nil
        /// "alive", "suspect" or "gone".
        public var state: String
        public var rttMs: Double?
        /// Milliseconds since this node last heard from the peer.
        public var lastSeenMs: Int64?
        public var rooms: [String]
        /// How the peer was found: "seed", "gossip", "inbound" or "mdns".
        public var foundBy: String
        /// Whether its address answered a probe of this node's, or this node's side named it (a
        /// seed, DNS-SD): docs/PROTOCOL.md, "Trust". Until then it gets little.
        public var trusted: Bool = false
        /// The peer it is reached through while its direct path is lost
        /// (``Membership/relayPath(to:)``); `nil` for a peer reached at its address.
        public var relay: Relay? = nil
    }

    /// A relay a peer is reached through, and that way's round trip once timed.
    public struct Relay: Codable, Sendable, Equatable {
        public var nick: String
        public var rttMs: Double?

        public init(nick: String, rttMs: Double?) {
            self.nick = nick
            self.rttMs = rttMs
        }
    }

    public struct RoomMember: Codable, Sendable, Equatable {
        public var id: String
        public var nick: String
        /// The nick as people see it (see ``Peer/displayName``).
        public var displayName: String? = nil
        /// Offset from the group's reference in ms (positive: behind); nil when not calibrated.
        public var offsetMs: Int64?
        public var calibrated: Bool
        /// Id of the reference of the member's calibrated group.
        public var reference: String?
        /// How far this member's stream is behind the node's own (negative: ahead), when both
        /// are in one calibrated group.
        public var behindYouMs: Int64? = nil
        /// What sound contributed to the offset: absent when it comes from marks alone.
        public var heard: Heard? = nil
    }

    /// The heard matches behind a member's offset.
    public struct Heard: Codable, Sendable, Equatable {
        /// How many count in the member's latest piece.
        public var matches: Int
        /// The highest standard score among them (9 is the least that counts).
        public var confidence: Double
        /// The smallest uncertainty among them, ms.
        public var sigmaMs: Double
    }

    /// While the node listens (`--listen`, `--audio-file`, `/listen`).
    public struct Listening: Codable, Sendable, Equatable {
        /// `file` or `device`.
        public var source: String
        /// Node-clock ms its first sample counts as heard.
        public var startedAt: Int64
        /// The latest match tried with each peer, by nick.
        public var peers: [String: Match]
        /// What of the sound left the node, and to whom (``SoundSharing``).
        public var sharing: Sharing
    }

    /// What of a listening node's sound leaves it.
    public struct Sharing: Codable, Sendable, Equatable {
        /// Why the latest window went where it went: `announcing`, `placing`, `rechecking`, or
        /// `kept` (it stayed on the machine).
        public var now: String
        /// Who the latest window went to, by nick.
        public var to: [String]
        /// Seconds of sound heard since listening started, and of those, seconds that left.
        public var heardS: Double
        public var sharedS: Double
        /// Seconds sent to each peer, by nick.
        public var sharedWith: [String: Double]
    }

    /// One match of this node's sound against a peer's.
    public struct Match: Codable, Sendable, Equatable {
        /// `aligned`, `not enough sound`, `ambiguous`, …
        public var verdict: String
        /// How much later the peer heard the same sound, ms of the two clocks, when aligned.
        public var lagMs: Double?
        public var confidence: Double
    }

    public struct Room: Codable, Sendable, Equatable {
        public var name: String
        /// A private room's id on the wire (``RoomKey/id``); `nil` for a public room.
        public var privateID: String? = nil
        public var current: Bool
        public var members: [RoomMember]
        /// Events held, shown or not, and of those still held back: replication's state, for
        /// scripts (the text for a person counts only what was shown, ``shownBy``).
        public var eventCount: Int
        public var heldBackCount: Int
        /// Highest contiguous seq held per origin id, held back or not (replication's state).
        public var versionVector: [String: UInt64]
        /// Per origin id, the events the reader has been shown (``RoomSession/shownCounts``).
        public var shownBy: [String: Int] = [:]
        /// Events held that cannot be shown yet: past a gap, or waiting for their causal context.
        public var waitingCount: Int = 0
        /// Origins quarantined for equivocation (id → the seq they signed twice): their events
        /// from that seq on are dropped.
        public var quarantined: [String: UInt64] = [:]
        /// The score this node's stream has reached (`/score`), if anyone posted one.
        public var score: Score? = nil
    }

    public struct Score: Codable, Sendable, Equatable {
        public var home: Int
        public var guest: Int
        public var by: String
        public var homeTeam: String?
        public var guestTeam: String?
    }

    public struct Counters: Codable, Sendable, Equatable {
        public var packetsIn: Int
        public var packetsOut: Int
        /// Everything dropped: the sum of `drops`.
        public var rejected: Int
        /// Of those, datagrams from peers speaking a newer wire protocol (upgrade this node).
        public var newerProtocol: Int
        public var eventsReceived: Int
        public var eventsStored: Int
        /// Copies of events already held (normal with UDP gossip; not in `rejected`).
        public var duplicates: Int = 0
        /// Sound windows sent to peers and taken from them, while listening.
        public var soundWindowsOut: Int = 0
        public var soundWindowsIn: Int = 0
        /// Datagrams not sent to an address that has not answered a probe of this node's, past the
        /// credit of whoever named it (docs/PROTOCOL.md, "Trust").
        public var withheld: Int = 0
        /// What was dropped, by why: "malformed", "oversized", "bad_signature", "not_joined",
        /// "invalid", "too_far_ahead", "over_budget", "too_many_origins", "quarantined",
        /// "unmet_context", "gap_expired", "sync_busy", "sync_broken", "unreadable",
        /// "rate_limited", ... (only non-zero ones).
        public var drops: [String: Int] = [:]
    }

    public var node: Node
    public var peers: [Peer]
    public var rooms: [Room]
    public var counters: Counters
    /// Absent while the node does not listen.
    public var listening: Listening? = nil
}
