/// A peer that announces itself on this network (mDNS) but whose address never answered a probe
/// of this node's: what a person needs to act on it (issue 47, "never alone by mistake").
///
/// Which way datagrams got through says where to look: `heardFrom` when the peer's own signed
/// probes reach this node (so this node's do not reach the peer: a firewall on the peer's
/// computer drops them), otherwise nothing arrives either way (a firewall here or there, or a
/// Wi-Fi that keeps devices apart, as guest networks do).
public struct Unanswered: Sendable, Equatable {
    public var nick: String
    /// Where it says it is, as announced.
    public var address: PeerAddress
    /// Whether its own datagrams reached this node.
    public var heardFrom: Bool
    /// This node's own port (UDP and TCP), which a firewall here would have to let in.
    public var ownPort: UInt16

    public init(nick: String, address: PeerAddress, heardFrom: Bool, ownPort: UInt16) {
        self.nick = nick
        self.address = address
        self.heardFrom = heardFrom
        self.ownPort = ownPort
    }
}

/// Announced peers whose address has not answered yet, and those the reader was told of: each
/// told once a run, ``after`` its first announcement, however often it comes and goes. It need
/// not be suspected first: a peer whose own probes reach this node stays alive here while
/// nothing of this node's reaches it. At most ``limit`` are watched (a flood of fake
/// announcements tells nothing more).
struct UnansweredWatch: Sendable {
    /// How long an announced peer has to answer: on a home network it does in milliseconds.
    static let after = TimeSpan.seconds(10)
    static let limit = 64
    private var watching: [NodeID: MonotonicTime] = [:]
    private var told: Set<NodeID> = []

    /// `id` was announced on this network at `now`: watched from its first announcement.
    mutating func announced(_ id: NodeID, now: MonotonicTime) {
        guard !told.contains(id), watching[id] == nil, watching.count < Self.limit else { return }
        watching[id] = now
    }

    /// Whether to tell the reader of `id` now: `false` once it was told (or ``limit`` were).
    /// For an announced node that can never answer, whatever its address does.
    mutating func tellOnce(_ id: NodeID) -> Bool {
        guard !told.contains(id), told.count < Self.limit else { return false }
        watching[id] = nil
        told.insert(id)
        return true
    }

    /// The peers watched for ``after`` that never answered at their address, to tell the reader
    /// of (this node's own port given as `ownPort`); the others are no longer watched.
    mutating func due(now: MonotonicTime, peers: PeerTable, ownPort: UInt16) -> [Unanswered] {
        var due: [Unanswered] = []
        for (id, since) in watching.sorted(by: { $0.key < $1.key }) {
            guard let peer = peers[id], !peer.addressProven, peer.rtt == nil else {
                watching[id] = nil  // answered, or forgotten (not one to tell of by name)
                continue
            }
            guard now - since >= Self.after, told.count < Self.limit else { continue }
            watching[id] = nil
            told.insert(id)
            due.append(Unanswered(nick: peer.nick, address: peer.address, heardFrom: peer.vouched > 0, ownPort: ownPort))
        }
        return due
    }
}
