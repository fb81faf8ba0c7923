/// Paths: which peers answer this node's probes at their own address, which answer only through
/// others, how long each way takes, and so how to send each peer a datagram (``route(to:)``).
///
/// - A probe of ours answered from the peer's address means the direct path works both ways
///   (``PeerPaths/directAt``). A period whose direct probes all went unanswered while the peer
///   answered through helpers (indirect probes) or relays makes the direct path *lost*; so does a
///   peer heard only through relays.
/// - Round trips through each relay come from the acks a helper forwarded for us (now minus the
///   request's send time) and from relayed probes of ours (``Membership/probe(via:to:now:)``).
/// - A peer whose direct path is lost is probed every period, directly (so a path that works
///   again, after a NAT rebinding or a router reboot, is noticed within a period) and through up
///   to ``MembershipConfig/indirectProbes`` candidate relays (so each relay's round trip stays
///   measured and the far side hears this node).
/// - ``route(to:)`` is then the direct address, or the live relay with the lowest round trip.
extension Membership {
    /// The paths measured to peer `id` (empty for an unknown one).
    public func paths(of id: NodeID) -> PeerPaths {
        relaying.paths[id] ?? PeerPaths()
    }

    /// How to send peer `id` a datagram now: its address while the direct path works (or nothing
    /// better is known), else through the live relay with the lowest measured round trip (a relay
    /// heard from but not timed yet comes after timed ones); `.none` for an unknown or gone peer.
    public func route(to id: NodeID) -> Route {
        guard let peer = peers[id], peer.state != .gone else { return .none }
        guard let relay = bestRelay(to: id) else { return .direct(peer.address) }
        return .via(relay: relay.id, address: relay.address)
    }

    /// The relay peer `id` is reached through, while its direct path is lost, and that way's
    /// round trip once timed (`huddle status`); `nil` for a peer reached directly.
    public func relayPath(to id: NodeID) -> (relay: Peer, roundTrip: TimeSpan?)? {
        guard let relay = bestRelay(to: id) else { return nil }
        return (relay, relaying.paths[id]?.relays[relay.id]?.rtt)
    }

    /// The relay to use for peer `id`: only while its direct path is lost; the live relay (alive or
    /// suspect, vouched, itself reachable directly) with the lowest round trip, then the most
    /// recently heard untimed one, then by id.
    func bestRelay(to id: NodeID) -> Peer? {
        guard let known = relaying.paths[id], known.directLost else { return nil }
        return known.relays
            .compactMap { relayID, path -> (Peer, RelayPath)? in
                guard let relay = peers[relayID], canRelay(relay, to: id) else { return nil }
                return (relay, path)
            }
            .min { a, b in
                switch (a.1.rtt, b.1.rtt) {
                case (let x?, let y?): (x, a.0.id) < (y, b.0.id)
                case (.some, nil): true
                case (nil, .some): false
                case (nil, nil): (b.1.at, a.0.id) < (a.1.at, b.0.id)
                }
            }?.0
    }

    /// Whether `relay` can carry datagrams to peer `id` for this node: a vouched, live peer that
    /// this node reaches directly, and (if `id`'s rooms are known) in a room with both.
    func canRelay(_ relay: Peer, to id: NodeID) -> Bool {
        guard relay.id != id, relay.id != me, relay.state != .gone, relay.vouched > 0,
            relaying.paths[relay.id]?.directLost != true
        else { return false }
        let theirs = peers[id]?.rooms ?? []
        let shared = Set(ownRooms).intersection(relay.rooms)
        return theirs.isEmpty ? !shared.isEmpty : !shared.intersection(theirs).isEmpty
    }

    /// Up to ``MembershipConfig/indirectProbes`` relays to try for peer `id` (hearsay or a peer):
    /// those with a measured path first, by round trip, then the others by their own round trip
    /// and id. With `only`, just that one if it qualifies.
    func relayCandidates(for id: NodeID, only: NodeID? = nil) -> [Peer] {
        let known = relaying.paths[id]?.relays ?? [:]
        let candidates = peers.values
            .filter { (only == nil || $0.id == only) && $0.state == .alive && canRelay($0, to: id) }
            .sorted { a, b in
                let ka = (known[a.id]?.rtt ?? .max, a.rtt ?? .max, a.id)
                let kb = (known[b.id]?.rtt ?? .max, b.rtt ?? .max, b.id)
                return ka < kb
            }
        return Array(candidates.prefix(max(1, config.indirectProbes)))
    }

    /// A probe of ours to peer `id` was answered from its own address: the direct path works.
    mutating func directAnswered(_ id: NodeID, now: MonotonicTime) {
        relaying.paths[id, default: PeerPaths()].directAt = now
        relaying.paths[id]?.directLost = false
        if period?.target == id { period?.answeredDirectly = true }
    }

    /// Peer `id` answered through `relay`, with a round trip if the answer was to a probe of ours.
    mutating func notePath(_ id: NodeID, via relay: NodeID, rtt sample: TimeSpan?, now: MonotonicTime) {
        var known = relaying.paths[id] ?? PeerPaths()
        var path = known.relays[relay] ?? RelayPath(rtt: nil, at: now)
        if let sample = sample.map({ min(max(.zero, $0), TimeSpan.max / 8) }) {
            path.rtt = path.rtt.map { ($0 * 7 + sample) / 8 } ?? sample
        }
        path.at = max(path.at, now)
        known.relays[relay] = path
        if period?.target == id { period?.answeredThroughOthers = true }
        // Heard only ever through others: nothing says the direct path works.
        if known.directAt == nil { known.directLost = true }
        relaying.paths[id] = known
    }

    /// The direct path to `id` did not answer a whole period while the peer answered otherwise.
    mutating func loseDirect(_ id: NodeID) {
        relaying.paths[id, default: PeerPaths()].directLost = true
    }

    /// Forgets paths of peers no longer known and relay paths not heard for
    /// ``MembershipConfig/relayPathLifetime`` (or through a relay that is gone).
    mutating func expirePaths(now: MonotonicTime) {
        let lifetime = config.relayPathLifetime
        let live = Set(peers.values.filter { $0.state != .gone }.map(\.id))
        var kept: [NodeID: PeerPaths] = [:]
        for (id, var known) in relaying.paths where peers[id] != nil || hearsay[id] != nil {
            known.relays = known.relays.filter { relayID, path in
                (now - path.at) < lifetime && live.contains(relayID)
            }
            kept[id] = known
        }
        relaying.paths = kept
    }

    /// Probes, at the start of a period, each peer whose direct path is lost: directly (unless it
    /// is the period's target, probed anyway), and through its candidate relays.
    mutating func probeLostPeers(now: MonotonicTime) -> [MembershipDirective] {
        var directives: [MembershipDirective] = []
        for id in relaying.paths.keys.sorted() where relaying.paths[id]?.directLost == true {
            guard let peer = peers[id], peer.state != .gone else { continue }
            if id != period?.target, peers.entries[id]?.doubt == nil {
                peers.entries[id]?.probeSoon = false
                directives.append(probe(peer.address, target: .peer(id), now: now))
            }
            for relay in relayCandidates(for: id) {
                probe(via: relay, to: id, now: now)
            }
        }
        return directives
    }

    /// Queues ``RelayDirective/routeChanged(id:nick:route:)`` for every peer whose way of sending
    /// (direct, or which relay) is not what it was last said to be.
    mutating func noteRouteChanges() {
        for id in peers.keys.sorted() {
            guard let peer = peers[id] else { continue }
            let route = route(to: id)
            let kind: RouteKind =
                switch route {
                case .direct, .none: .direct
                case .via(let relay, _): .via(relay)
                }
            let said = relaying.saidRoutes[id] ?? .direct
            guard said != kind, peer.state != .gone else { continue }
            relaying.saidRoutes[id] = kind
            queueRelay(.routeChanged(id: id, nick: peer.nick, route: route))
        }
        relaying.saidRoutes = relaying.saidRoutes.filter { peers[$0.key] != nil }
    }

    /// Hands the shell a relay directive (``takeRelayDirectives()``); the oldest are dropped past
    /// ``maxRelayOutbox`` if the shell does not drain them.
    mutating func queueRelay(_ directive: RelayDirective) {
        relaying.outbox.append(directive)
        if relaying.outbox.count > Self.maxRelayOutbox { relaying.outbox.removeFirst(relaying.outbox.count - Self.maxRelayOutbox) }
    }

    /// The most relay directives kept for the shell.
    static let maxRelayOutbox = 256

    /// Which way a peer's datagrams were last said to go.
    enum RouteKind: Hashable, Sendable {
        case direct
        case via(NodeID)
    }
}
