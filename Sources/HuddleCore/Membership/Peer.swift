/// What a node knows about one other node, as kept by ``Membership``.
///
/// Times are moments of the local monotonic clock (the `now` passed to ``Membership``).
///
/// ```swift
/// for peer in membership.peers.values.sorted(by: { $0.id < $1.id }) {
///     print(peer.nick, peer.address, peer.state, peer.rtt.map { "\($0.microseconds) µs" } ?? "-")
/// }
/// ```
public struct Peer: Hashable, Sendable {
    /// The peer's node id.
    public var id: NodeID
    /// Its nick, as it last told us (or as gossiped, until it does).
    public var nick: String
    /// Where its datagrams come from, and so where this node sends it datagrams: the address a
    /// probe of its own arrived from (peer-reflexive, as ICE calls it), else the one this node
    /// reached it at. Behind a NAT that is the router's mapping, not the port it announces.
    public var address: PeerAddress
    /// The port it says it listens on (UDP and TCP; its probes carry it). Pulls go there, at
    /// ``address``'s host: see ``syncAddress``.
    public var announcedPort: UInt16
    /// Where to pull from over TCP: ``address``'s host at ``announcedPort`` (a NAT's mapping of
    /// UDP is no TCP port; a forwarded port is the announced one).
    public var syncAddress: PeerAddress { PeerAddress(host: address.host, port: announcedPort) }
    /// The rooms it is in, as it last told us (empty until it does); at most
    /// ``WireLimits/maxRoomsPerNode``.
    public var rooms: [String]
    /// How this node sees it: alive, suspect or gone, by the latest claim (see ``Membership``).
    public var state: PeerState
    /// The incarnation of its state: as it last told us, or as a later claim had it.
    public var incarnation: UInt64
    /// The highest incarnation the peer itself has claimed in a signed probe or ack to us (0:
    /// none yet). Gossip about the peer is believed only up to this: a claim at a higher
    /// incarnation may be a restart or a forgery, and the peer is asked instead.
    public var vouched: UInt64
    /// When we last heard from it directly (or learned of it).
    public var lastSeen: MonotonicTime
    /// Smoothed round trip (first sample, then 7/8 old + 1/8 new, like TCP's SRTT);
    /// `nil` until one of our probes has been answered.
    public var rtt: TimeSpan?
    /// How we first learned of it.
    public var foundBy: PeerSource
    /// Whether it answered, with its own signed ack, a probe this node sent to ``address``, from
    /// ``address``: it receives there (docs/PROTOCOL.md, "Trust"). Until then datagrams to it
    /// spend credit (``SendCredit``) and it has none of a peer's privileges.
    public var addressProven = false

    /// A peer as given (``Membership`` makes these; this is for tests and status output).
    public init(
        id: NodeID, nick: String, address: PeerAddress, rooms: [String], state: PeerState, incarnation: UInt64,
        lastSeen: MonotonicTime, rtt: TimeSpan?, foundBy: PeerSource, vouched: UInt64 = 0, announcedPort: UInt16? = nil
    ) {
        self.id = id
        self.nick = nick
        self.address = address
        self.announcedPort = announcedPort ?? address.port
        self.rooms = rooms
        self.state = state
        self.incarnation = incarnation
        self.lastSeen = lastSeen
        self.rtt = rtt
        self.foundBy = foundBy
        self.vouched = vouched
    }
}

/// How a node first learned of a peer.
public enum PeerSource: Hashable, Sendable {
    /// It answered a probe to a `--peer HOST:PORT` seed.
    case seed
    /// Another peer listed it in a probe or ack.
    case gossip
    /// It contacted us first.
    case inbound
    /// It was found by DNS-SD over mDNS.
    case mdns
}
