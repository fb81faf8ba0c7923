@testable import HuddleCore

/// Memberships on a simulated network where each pair of nodes has its own one-way delay and
/// some pairs cannot reach each other at all, in virtual time (event by event, no steps), with
/// every directive carried out as a node's shell would: sends, forwards, relays through
/// ``Membership/accept(_:from:now:)``, and the relay outbox drained after every call.
struct RelayNetwork {
    /// A datagram on its way: a plain message, or a relay (kept as the bytes a relay forwards).
    enum Datagram {
        case message(WireMessage)
        case relay([UInt8])
    }

    struct InFlight {
        var at: MonotonicTime
        var order: Int
        var from: Int
        var to: Int
        var datagram: Datagram
    }

    var nodes: [Membership]
    var addresses: [PeerAddress]
    /// One-way delay between two nodes (symmetric), by unordered pair.
    var delay: [Set<Int>: TimeSpan] = [:]
    var defaultDelay = TimeSpan.milliseconds(1)
    /// Pairs that cannot reach each other in either direction.
    var blocked: Set<Set<Int>> = []
    /// The share of datagrams lost at random on every link (0 ... 1), drawn from `random`.
    var loss = 0.0
    var random = SplitMix64(seed: 0x22)
    var wakeAt: [MonotonicTime?]
    var inFlight: [InFlight] = []
    var now = MonotonicTime.start
    var order = 0
    /// Everything each node was told about routes, in order.
    var routeChanges: [[(id: NodeID, route: Route)]]
    /// Events each node received, and through which relay (nil: directly).
    var eventsReceived: [[(event: Event, relay: NodeID?)]]
    /// Relays refused, by node and reason.
    var refused: [[RelayRefusal]]
    /// Datagrams each node forwarded as a relay.
    var forwarded: [Int]

    init(count: Int, rooms: [String] = ["superbowl"]) {
        addresses = (0..<count).map { PeerAddress(host: "10.77.0.\(11 + $0)", port: 7400) }
        nodes = (0..<count).map { index in
            var node = Membership(me: NodeID.fixture(UInt8(index + 1)), nick: "n\(index)", port: 7400, incarnation: 1)
            node.rooms = rooms
            return node
        }
        wakeAt = Array(repeating: .start, count: count)
        routeChanges = Array(repeating: [], count: count)
        eventsReceived = Array(repeating: [], count: count)
        refused = Array(repeating: [], count: count)
        forwarded = Array(repeating: 0, count: count)
    }

    func id(_ node: Int) -> NodeID { nodes[node].me }
    func index(of address: PeerAddress) -> Int? { addresses.firstIndex(of: address) }

    mutating func setDelay(_ a: Int, _ b: Int, _ oneWay: TimeSpan) { delay[[a, b]] = oneWay }

    mutating func send(_ datagram: Datagram, from: Int, to address: PeerAddress) {
        guard let to = index(of: address), to != from, !blocked.contains([from, to]) else { return }
        if loss > 0, Double.random(in: 0..<1, using: &random) < loss { return }
        order += 1
        inFlight.append(
            InFlight(at: now + (delay[[from, to]] ?? defaultDelay), order: order, from: from, to: to, datagram: datagram))
    }

    mutating func apply(_ directives: [MembershipDirective], at node: Int) {
        for directive in directives {
            switch directive {
            case .send(let message, let address), .forward(let message, let address):
                send(.message(message), from: node, to: address)
            case .scheduleTick(let at):
                wakeAt[node] = at
            case .peerChanged, .peerLeft, .peerMoved, .peerProven:
                break
            }
        }
        for directive in nodes[node].takeRelayDirectives() {
            switch directive {
            case .sendVia(let message, let target, let relay):
                sendVia(message, from: node, to: target, relay: relay)
            case .routeChanged(let id, _, let route):
                routeChanges[node].append((id, route))
            }
        }
    }

    mutating func sendVia(_ message: WireMessage, from node: Int, to target: NodeID, relay: PeerAddress) {
        let wrapped = RelayMessage(from: id(node), to: target, payload: message.encoded())!
        send(.relay(wrapped.encoded()), from: node, to: relay)
    }

    /// Sends `message` to node `target` the way ``Membership/route(to:)`` says.
    mutating func sendRouted(_ message: WireMessage, from node: Int, to target: Int) {
        switch nodes[node].route(to: id(target)) {
        case .direct(let address): send(.message(message), from: node, to: address)
        case .via(_, let address): sendVia(message, from: node, to: id(target), relay: address)
        case .none: break
        }
    }

    mutating func deliver(_ flight: InFlight) {
        let node = flight.to
        let source = addresses[flight.from]
        switch flight.datagram {
        case .message(let message):
            handle(message, at: node, from: source, relay: nil)
        case .relay(let bytes):
            guard let relay = try? RelayMessage(decoding: bytes) else { return }
            switch nodes[node].accept(relay, from: source, now: now) {
            case .deliver(.message(let message), _, let relayID):
                handle(message, at: node, from: source, relay: relayID)
            case .deliver(.sound, _, _):
                return  // membership only: nobody listens here
            case .forward(let address):
                forwarded[node] += 1
                send(.relay(bytes), from: node, to: address)
            case .refuse(let reason):
                refused[node].append(reason)
            }
        }
    }

    mutating func handle(_ message: WireMessage, at node: Int, from source: PeerAddress, relay: NodeID?) {
        let directives: [MembershipDirective]
        switch (message, relay) {
        case (.probe(let probe), nil): directives = nodes[node].receive(probe, from: source, now: now)
        case (.probe(let probe), let relay?): directives = nodes[node].receive(probe, via: relay, now: now)
        case (.ack(let ack), nil): directives = nodes[node].receive(ack, from: source, now: now)
        case (.ack(let ack), let relay?): directives = nodes[node].receive(ack, via: relay, now: now)
        case (.probeRequest(let request), nil): directives = nodes[node].receive(request, from: source, now: now)
        case (.nack(let nack), nil): directives = nodes[node].receive(nack, from: source, now: now)
        case (.events(let events), _):
            for event in events { eventsReceived[node].append((event, relay)) }
            directives = []
        default: directives = []
        }
        apply(directives, at: node)
    }

    /// Runs until `until`: deliveries in arrival order, ticks when due.
    mutating func run(until end: MonotonicTime) {
        while true {
            let nextFlight = inFlight.min { ($0.at, $0.order) < ($1.at, $1.order) }
            let nextWake = wakeAt.enumerated().compactMap { i, at in at.map { (i, $0) } }.min { ($0.1, $0.0) < ($1.1, $1.0) }
            let at = min(nextFlight?.at ?? .distantFuture, nextWake?.1 ?? .distantFuture)
            guard at <= end else { break }
            now = max(now, at)
            if let flight = nextFlight, flight.at == at {
                inFlight.removeAll { $0.order == flight.order }
                deliver(flight)
            } else if let (node, _) = nextWake {
                wakeAt[node] = nil
                apply(nodes[node].tick(now: now), at: node)
            }
        }
        now = end
    }

    mutating func run(for duration: TimeSpan) { run(until: now + duration) }
}
