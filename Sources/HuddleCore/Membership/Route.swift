/// How this node sends a datagram to a peer: straight to its address, or through a live common
/// peer that relays it (a ``RelayMessage``), or not at all.
///
/// ```swift
/// switch membership.route(to: bob) {
/// case .direct(let address): send(bytes, to: address)
/// case .via(_, let relay): send(RelayMessage(from: me, to: bob, payload: bytes)!.encoded(), to: relay)
/// case .none: break   // unknown or gone: nothing to send to
/// }
/// ```
public enum Route: Hashable, Sendable {
    /// Send to the peer's own address (the one its datagrams come from).
    case direct(PeerAddress)
    /// The peer answers only through the relay `relay`, at `address`: wrap and send there.
    case via(relay: NodeID, address: PeerAddress)
    /// Not a peer, or gone.
    case none
}

extension Route {
    /// The datagram to send for `payload` (one encoded message, signed if it is a membership
    /// message) from `me` to peer `to` along this route, and where: the payload itself to a direct
    /// address; a ``RelayMessage`` around it to a relay. `nil` for `.none`, and for a payload a
    /// relay does not carry (a digest, anything over ``RelayMessage/maxPayloadBytes``): send those
    /// to the peer's own address, or not at all.
    ///
    /// ```swift
    /// let bytes = WireMessage.events(events).encoded()
    /// if let (datagram, address) = membership.route(to: bob).datagram(bytes, from: me, to: bob) {
    ///     send(datagram, to: address)
    /// }
    /// ```
    public func datagram(_ payload: [UInt8], from me: NodeID, to id: NodeID) -> (bytes: [UInt8], address: PeerAddress)? {
        switch self {
        case .direct(let address): (payload, address)
        case .via(_, let address): RelayMessage(from: me, to: id, payload: payload).map { ($0.encoded(), address) }
        case .none: nil
        }
    }

    /// The relay, for a route through one.
    public var relay: NodeID? {
        if case .via(let relay, _) = self { relay } else { nil }
    }
}

/// What this node has measured of the ways to one peer: whether its own probes to the peer's
/// address are answered, and the round trips of the probes that reached it through each relay.
///
/// ```swift
/// let paths = membership.paths(of: bob)
/// paths.directLost            // true: bob answers only through others
/// paths.relays[carol]?.rtt    // .microseconds(2_310) through carol
/// ```
public struct PeerPaths: Hashable, Sendable {
    /// When a probe this node sent to the peer's address was last answered from it;
    /// `nil` if none ever was.
    public var directAt: MonotonicTime?
    /// Whether the direct path is known not to work: a period's direct probes went unanswered
    /// while the peer answered through a relay, or the peer was only ever heard through relays.
    /// Cleared by the next direct answer.
    public var directLost = false
    /// The relays that reached the peer for this node, by id.
    public var relays: [NodeID: RelayPath] = [:]

    public init(directAt: MonotonicTime? = nil, directLost: Bool = false, relays: [NodeID: RelayPath] = [:]) {
        self.directAt = directAt
        self.directLost = directLost
        self.relays = relays
    }
}

/// One relay's path to a peer: how long a probe took there and back through it, and when that was
/// last seen working.
public struct RelayPath: Hashable, Sendable {
    /// Smoothed round trip through the relay (7/8 old + 1/8 new); `nil` until a probe of
    /// ours was answered through it (the peer's own relayed probe shows the path but not its time).
    public var rtt: TimeSpan?
    /// When the path last carried something from the peer.
    public var at: MonotonicTime

    public init(rtt: TimeSpan?, at: MonotonicTime) {
        self.rtt = rtt
        self.at = at
    }
}

/// What ``Membership`` asks its shell to do about relays, drained with
/// ``Membership/takeRelayDirectives()`` after each call into it (the poll half of a sans-I/O
/// machine, beside the ``MembershipDirective``s it returns).
public enum RelayDirective: Hashable, Sendable {
    /// Sign `message` (a probe or ack of this node's, as for ``MembershipDirective/send(_:to:)``),
    /// wrap it in a ``RelayMessage`` to `to`, and send that to the relay at `relay`.
    case sendVia(WireMessage, to: NodeID, relay: PeerAddress)
    /// The way to a peer changed: tell the user ("bob is reachable only through carol", "bob is
    /// reachable directly again"), and send its datagrams by ``Membership/route(to:)`` from now on.
    case routeChanged(id: NodeID, nick: String, route: Route)
}

/// What to do with a ``RelayMessage`` that arrived (``Membership/accept(_:from:now:)``).
public enum RelayVerdict: Hashable, Sendable {
    /// It is for this node: check the payload's signatures as for any datagram, then handle it as
    /// `sender`'s, reached through `relay` (a probe or ack through ``Membership/receive(_:via:now:)``,
    /// events as pushed ones, a goodbye as one, a sound window as one).
    case deliver(Datagram, sender: NodeID, relay: NodeID)
    /// This node relays it: send the datagram exactly as it arrived to `address` (the target's).
    case forward(to: PeerAddress)
    /// Dropped, for this reason (count it).
    case refuse(RelayRefusal)
}

/// Why a relay was refused. Each is counted by the shell, like any bad input.
public enum RelayRefusal: String, Hashable, Sendable, CaseIterable {
    /// The datagram did not come from the address of a vouched, live peer that is its `from`
    /// (relaying for this node) or that relayed it (a delivery): a stranger's.
    case stranger
    /// The target is not a vouched, live peer of this node.
    case unknownTarget
    /// No room is shared by the requester, the target and this node; or the payload carries an
    /// event or a sound window of a room the two do not share.
    case noSharedRoom
    /// A membership payload not signed by `from` (it relays only its own word).
    case notItsOwn
    /// `from` or `to` is this node, or the two are the same.
    case misdirected
    /// Over the requester's or this node's relay rate.
    case overRate
}

/// What membership keeps to reach peers it cannot reach directly, apart from SWIM's core: the
/// ways to each peer it measured, which way each peer's datagrams were last said to go, the
/// directives waiting for the node machine, and how much it relays for others.
struct Relaying: Sendable {
    /// The ways to each peer this node has measured.
    var paths: [NodeID: PeerPaths] = [:]
    /// Which way each peer's datagrams were last said to go (``RelayDirective/routeChanged(id:nick:route:)``).
    var saidRoutes: [NodeID: Membership.RouteKind] = [:]
    /// Relay directives waiting for the machine (``Membership/takeRelayDirectives()``).
    var outbox: [RelayDirective] = []
    /// How many datagrams a second this node relays: 100 for one requester (a node pushing a
    /// message a second to a handful of peers needs a few), 400 for everyone, bursts of 2 s.
    var budget = RateBudget(perPeer: 100, total: 400, burst: .seconds(2))
}
