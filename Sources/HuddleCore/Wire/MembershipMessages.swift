/// A membership probe (heartbeat): "I am alive; here is what I know".
///
/// The receiver answers with an ``Ack`` echoing `sequence` and `sentAt`, so the prober can match
/// the answer and measure the round trip on its own clock. Both carry the sender's news
/// (``MemberNews``: its rooms and a sample of its peer list), so one seed is enough to learn the
/// whole network; its fields read as the probe's own (`probe.rooms`).
@dynamicMemberLookup
public struct Probe: Hashable, Sendable {
    /// The probing node.
    public var from: NodeID
    /// Probe number, echoed in the ``Ack``.
    public var sequence: UInt64
    /// The prober's monotonic clock when it sent the probe; echoed in the ``Ack``. Only the
    /// prober interprets it.
    public var sentAt: MonotonicTime
    /// The port the prober listens on (UDP and TCP), since the datagram's source port may differ.
    public var port: UInt16
    /// What the prober says of itself and of the peers it knows.
    public var news: MemberNews
    /// Ed25519 signature by `from` over ``WireMessage/membershipSignedBytes`` (64 bytes; zeros
    /// until the shell signs the message with ``NodeIdentity/signed(_:)``).
    public var signature: [UInt8]

    public init(
        from: NodeID, nick: String, incarnation: UInt64, sequence: UInt64, sentAt: MonotonicTime, port: UInt16,
        rooms: [String], peers: [PeerRecord], agreementKey: [UInt8] = WireLimits.noAgreementKey,
        roomTags: [[UInt8]] = [], signature: [UInt8] = WireMessage.unsignedMembership
    ) {
        self.from = from
        self.sequence = sequence
        self.sentAt = sentAt
        self.port = port
        news = MemberNews(
            nick: nick, incarnation: incarnation, rooms: rooms, peers: peers, agreementKey: agreementKey, roomTags: roomTags)
        self.signature = signature
    }

    public subscript<Value>(dynamicMember field: WritableKeyPath<MemberNews, Value>) -> Value {
        get { news[keyPath: field] }
        set { news[keyPath: field] = newValue }
    }
}

/// The answer to a ``Probe``: "I am alive too", with the probe's number and send time echoed,
/// and the answering node's news (``MemberNews``).
@dynamicMemberLookup
public struct Ack: Hashable, Sendable {
    /// The answering node.
    public var from: NodeID
    /// The ``Probe/sequence`` this answers.
    public var sequence: UInt64
    /// The ``Probe/sentAt`` this answers, unchanged: the prober's round trip is now minus this.
    public var echoedSentAt: MonotonicTime
    /// What the answering node says of itself and of the peers it knows.
    public var news: MemberNews
    /// Ed25519 signature by `from` over ``WireMessage/membershipSignedBytes`` (see ``Probe/signature``).
    public var signature: [UInt8]

    public init(
        from: NodeID, nick: String, incarnation: UInt64, sequence: UInt64, echoedSentAt: MonotonicTime,
        rooms: [String], peers: [PeerRecord], agreementKey: [UInt8] = WireLimits.noAgreementKey,
        roomTags: [[UInt8]] = [], signature: [UInt8] = WireMessage.unsignedMembership
    ) {
        self.from = from
        self.sequence = sequence
        self.echoedSentAt = echoedSentAt
        news = MemberNews(
            nick: nick, incarnation: incarnation, rooms: rooms, peers: peers, agreementKey: agreementKey, roomTags: roomTags)
        self.signature = signature
    }

    public subscript<Value>(dynamicMember field: WritableKeyPath<MemberNews, Value>) -> Value {
        get { news[keyPath: field] }
        set { news[keyPath: field] = newValue }
    }
}

/// What a ``Probe`` and its ``Ack`` both carry about their sender: who it is now, where it is,
/// and a sample of whom it knows (SWIM's piggybacked gossip).
public struct MemberNews: Hashable, Sendable {
    /// The sender's nick.
    public var nick: String
    /// Its incarnation: higher on every start, so gossip can tell a restarted node's new address.
    public var incarnation: UInt64
    /// The rooms it is in (at most ``WireLimits/maxRoomsPerNode``).
    public var rooms: [String]
    /// Peers it knows (at most ``WireLimits/maxPeersPerList``).
    public var peers: [PeerRecord]
    /// Its X25519 public key for direct messages (32 bytes; zeros: none). Signed with the rest,
    /// so it is bound to the sender.
    public var agreementKey: [UInt8]
    /// One 16-byte name check per room in `rooms`, in order (zeros: none): for a private room,
    /// what lets a node with another passphrase for a room of the same name say so (see
    /// ``RoomKey/nameTag(for:room:)``).
    public var roomTags: [[UInt8]]
}

/// One entry of a gossiped peer list: who a node knows, where it listens, and how it is doing.
///
/// ```swift
/// PeerRecord(id: bob, nick: "bob", host: "192.0.2.12", port: 7400, state: .alive, incarnation: 3)
/// ```
public struct PeerRecord: Hashable, Sendable {
    /// The peer's node id.
    public var id: NodeID
    /// The peer's nick.
    public var nick: String
    /// Where the peer listens: an address literal or a DNS name (at most 255 bytes).
    public var host: String
    /// The peer's listening port (UDP and TCP).
    public var port: UInt16
    /// How the gossiping node sees the peer.
    public var state: PeerState
    /// The peer incarnation this state is about; a higher incarnation overrides a lower one.
    public var incarnation: UInt64

    public init(id: NodeID, nick: String, host: String, port: UInt16, state: PeerState, incarnation: UInt64) {
        self.id = id
        self.nick = nick
        self.host = host
        self.port = port
        self.state = state
        self.incarnation = incarnation
    }

    /// Number of bytes this record takes on the wire (for fitting a peer list into a datagram).
    public var encodedByteCount: Int {
        NodeID.byteCount + 2 + nick.utf8.count + 2 + host.utf8.count + 2 + 1 + 8
    }
}

/// How a node sees a peer, as gossiped in a ``PeerRecord``. The raw value is the wire byte.
public enum PeerState: UInt8, Hashable, Sendable, CaseIterable {
    /// Answering probes.
    case alive = 1
    /// Missed probes; may be dead, may be slow. It refutes by raising its incarnation.
    case suspect = 2
    /// Declared dead, or left.
    case gone = 3
}

/// "Probe `target` for me": SWIM's ping-req, sent to a few other members when a direct probe to
/// `target` went unanswered, so a lossy or broken path between two nodes does not make one of
/// them suspect the other.
///
/// The helper probes `target` at the address it knows with `sentAt` as the probe's send time. The
/// target's ``Ack`` echoes it, and the helper forwards that ack unchanged (still signed by the
/// target) to the requester at the address the helper knows for it; if no ack came in time it
/// sends a ``Nack`` instead. A helper answers only requests from peers it knows and about peers it
/// knows, so it cannot be aimed at anyone else.
///
/// ```swift
/// ProbeRequest(from: alice, target: bob, sentAt: now)   // alice asks carol to reach bob
/// ```
public typealias ProbeRequest = IndirectProbe<IndirectProbeRole.Request>

/// A helper's "I asked `target` for you and it did not answer me either" (Lifeguard's nack), sent
/// when a ``ProbeRequest``'s probe went unanswered for the helper's probe timeout.
///
/// To the requester it says two things: the helper is up and answering (so a period that ends
/// with neither an ack nor the nacks it expected is a sign the *requester* is slow), and one more
/// member cannot reach `target` (a confirmation of the suspicion).
public typealias Nack = IndirectProbe<IndirectProbeRole.Nack>

/// The two messages of an indirect probe, ``ProbeRequest`` and ``Nack``: the same four fields,
/// kept apart as types by their role, so that a nack is never taken for a request.
public struct IndirectProbe<Role: Sendable>: Hashable, Sendable {
    /// Who sent it: the requester (a request) or the helper (a nack).
    public var from: NodeID
    /// The node to probe (a request), or that did not answer the helper (a nack).
    public var target: NodeID
    /// The requester's monotonic clock when it asked: the helper's probe carries it, the target's
    /// ack echoes it, a nack returns it unchanged, so the requester can tell what answers what.
    public var sentAt: MonotonicTime
    /// Ed25519 signature by `from` over ``WireMessage/membershipSignedBytes``.
    public var signature: [UInt8]

    public init(from: NodeID, target: NodeID, sentAt: MonotonicTime, signature: [UInt8] = WireMessage.unsignedMembership) {
        self.from = from
        self.target = target
        self.sentAt = sentAt
        self.signature = signature
    }
}

/// What an ``IndirectProbe`` is: a request, or a helper's nack.
public enum IndirectProbeRole {
    public enum Request: Sendable {}
    public enum Nack: Sendable {}
}

/// A node's goodbye: it stops on purpose (`/quit`, end of input, SIGTERM), so its peers say it
/// left at once instead of suspecting it for seconds. Signed by the leaving node; it names the
/// incarnation that ends, so a copy replayed after the node starts again (with a higher one)
/// changes nothing.
public struct Leaving: Hashable, Sendable {
    /// The node that leaves.
    public var from: NodeID
    /// Its incarnation, the one that ends.
    public var incarnation: UInt64
    /// Ed25519 signature by `from` over ``WireMessage/membershipSignedBytes``.
    public var signature: [UInt8]

    public init(from: NodeID, incarnation: UInt64, signature: [UInt8] = WireMessage.unsignedMembership) {
        self.from = from
        self.incarnation = incarnation
        self.signature = signature
    }
}
