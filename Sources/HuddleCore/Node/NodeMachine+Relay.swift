/// Relaying (docs/PROTOCOL.md, "Relaying"): peers that cannot reach each other, as in two homes
/// behind strict NATs, talk through a live common peer. ``Membership`` finds the paths and keeps
/// the rules; here they become datagrams.
extension NodeMachine {
    /// A relay datagram (kind 10) that arrived from `source`, with its bytes as they came: for
    /// another peer (forwarded untouched), for this node (taken like any datagram, signatures
    /// checked), or refused and counted.
    mutating func receive(_ relay: RelayMessage, bytes: [UInt8], from source: PeerAddress, now: NodeTime) {
        counters.packetsIn += 1
        membership.arrived(bytes.count, from: source)
        switch membership.accept(relay, from: source, now: now.monotonic) {
        case .forward(let address):
            transmit(bytes, to: address)
        case .refuse:
            countDropped(.relayRefused)
        case .deliver(.sound(let window), _, _):
            // Checked as one sent directly (a live peer of the room, its signature).
            take(window, from: source, now: now)
        case .deliver(.message(let message), _, let via):
            if message.isMembership, !message.hasValidMembershipSignature { return countDropped(.badSignature) }
            switch message {
            case .probe(let probe):
                perform(membership.receive(probe, via: via, now: now.monotonic), now: now)
                read(card: probe.agreementKey, roomTags: probe.roomTags, rooms: probe.rooms, of: probe.from, nick: probe.nick, now: now)
            case .ack(let ack):
                perform(membership.receive(ack, via: via, now: now.monotonic), now: now)
                read(card: ack.agreementKey, roomTags: ack.roomTags, rooms: ack.rooms, of: ack.from, nick: ack.nick, now: now)
            case .leaving(let leaving):
                perform(membership.receive(leaving, now: now.monotonic), now: now)
            case .events(let events):
                // Taken like a push from the relay, a live peer.
                receive(events: events, from: source, now: now)
            default:
                countDropped(.relayRefused)
            }
        }
        // What membership decided about the relay (a route learned, one refused) goes out.
        performRelayDirectives()
        noteVouched()
    }

    /// Sends `message` to each peer along its route: one datagram for all the peers reached
    /// directly, and one relay datagram for each peer reached only through another. A message
    /// a relay does not carry (a digest) goes only to peers reached directly.
    mutating func send(_ message: WireMessage, toPeers peers: [Peer]) {
        var direct: [PeerAddress] = []
        var bytes: [UInt8]?
        for peer in peers {
            switch membership.route(to: peer.id) {
            case .direct(let address):
                direct.append(address)
            case .via(_, let relay):
                let payload = bytes ?? message.encoded()
                bytes = payload
                guard let wrapped = RelayMessage(from: identity.id, to: peer.id, payload: payload) else { continue }
                transmit(wrapped.encoded(), to: relay)
            case .none:
                // Known but not a live peer any more (a direct room's other side, say): its last address.
                direct.append(peer.address)
            }
        }
        send(message, to: direct)
    }

    /// Sends `message` to the peer at `address` (as Replication names peers), along its route.
    mutating func send(_ message: WireMessage, toPeerAt address: PeerAddress) {
        if let peer = membership.livePeer(at: address) {
            send(message, toPeers: [peer])
        } else {
            send(message, to: [address])
        }
    }

    /// Carries out what membership queued for relays: probes and acks through a relay, and the
    /// reader told when a peer becomes reachable only through another, or directly again.
    mutating func performRelayDirectives() {
        for directive in membership.takeRelayDirectives() {
            switch directive {
            case .sendVia(let message, let target, let relay):
                let inner = identity.signed(withCard(message)).encoded()
                guard let wrapped = RelayMessage(from: identity.id, to: target, payload: inner) else { continue }
                transmit(wrapped.encoded(), to: relay)
            case .routeChanged(_, let nick, let route):
                say(.route(nick: nick, through: route.relay.map { membership.peers[$0]?.nick ?? "\($0)" }))
            }
        }
    }
}
