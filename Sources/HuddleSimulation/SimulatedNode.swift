import HuddleCore

/// One node of a simulation: the very ``NodeMachine`` a real node runs, on a virtual clock, with
/// the simulated network in place of sockets and pulls as reliable (TCP) messages. What the
/// machine asks to store is dropped: a simulated node never restarts. Time is one virtual clock,
/// a ``MonotonicTime`` from the run's start; the node's wall clock reads the same moment, from
/// the epoch, to the millisecond (as a real node's does).
struct SimulatedNode {
    let index: Int
    let identity: NodeIdentity
    let address: PeerAddress
    let room: String
    var machine: NodeMachine
    /// The pull running with each peer, and the request its next batch answers.
    private var pulls: [PeerAddress: (pull: PullRequest, asked: SyncRequest)] = [:]

    /// What handling one input did.
    struct Effects {
        /// Datagrams (and TCP messages) to send, in order.
        var sends: [Send] = []
        /// Chat events this node showed.
        var shown: [EventID] = []
        /// Peers whose state this node reported changed, and to what.
        var changes: [(id: NodeID, to: PeerState)] = []
    }

    /// What travels: a message, or a relay datagram around one.
    enum Packet {
        case message(WireMessage)
        case relay(RelayMessage, bytes: [UInt8])

        /// The kind the report counts it under.
        var kind: String {
            switch self {
            case .message(let message): "\(message.kind)"
            case .relay: "relay"
            }
        }
    }

    struct Send {
        var packet: Packet
        var to: PeerAddress
        /// Sent over TCP: the network retransmits it instead of losing it.
        var reliable: Bool
    }

    init(index: Int, identity: NodeIdentity, room: String, seed: UInt64, membership config: MembershipConfig) {
        self.index = index
        self.identity = identity
        self.room = room
        address = Self.address(of: index)
        machine = NodeMachine(
            NodeSetup(
                identity: identity, nick: "n\(index)", port: address.port, startedAt: .epoch, incarnation: 1,
                // Nobody marks in the simulator and its figures are delivery times: its viewers
                // run with the shield off, as one who knows it is ahead of everyone would.
                membership: config, seed: seed, shield: nil))
    }

    /// Node `index`'s address: 10.0.x.y, port 7400.
    static func address(of index: Int) -> PeerAddress {
        PeerAddress(host: "10.0.\(index / 250).\(index % 250 + 1)", port: 7400)
    }

    /// When the node next needs ``tick(now:)``: a membership or replication tick, or a release.
    var nextTick: MonotonicTime {
        min(machine.nextMachineTick, machine.nextRelease.map(Self.virtual) ?? .distantFuture)
    }

    /// The node's two clocks at virtual moment `now`: the wall clock reads as long after the
    /// epoch, rounded down to the millisecond, as the monotonic clock after its start.
    private static func time(_ now: MonotonicTime) -> NodeTime {
        NodeTime(wall: (WallTime.epoch + now.sinceStart).wholeMilliseconds, monotonic: now)
    }

    /// The virtual moment the wall clock reads `wall` (the other way round).
    private static func virtual(_ wall: WallTime) -> MonotonicTime {
        .start + (wall - .epoch)
    }

    // MARK: Inputs

    /// The node starts and joins the room.
    mutating func start(now: MonotonicTime) -> Effects {
        machine.start(room: room, now: Self.time(now))
        return collect()
    }

    /// Another node was found (as mDNS would report it).
    mutating func discovered(_ other: SimulatedNode, now: MonotonicTime) -> Effects {
        machine.discovered(id: other.identity.id, nick: "n\(other.index)", address: other.address, rooms: [room], now: Self.time(now))
        return collect()
    }

    /// This node writes a chat message, as typed on its console.
    mutating func say(_ text: String, now: MonotonicTime) -> (Event?, Effects) {
        let event = machine.originate(.chat(text: text), in: room, now: Self.time(now))
        return (event, collect())
    }

    /// Time passed.
    mutating func tick(now: MonotonicTime) -> Effects {
        machine.tick(now: Self.time(now))
        return collect()
    }

    /// A packet arrived from `source`.
    mutating func receive(_ packet: Packet, from source: PeerAddress, now: MonotonicTime) -> Effects {
        switch packet {
        case .message(let message):
            return receive(message, from: source, now: now)
        case .relay(let relay, let bytes):
            var checks = UnlimitedChecks()
            machine.receive(relay, bytes: bytes, from: source, now: Self.time(now), checks: &checks)
            return collect()
        }
    }

    /// A message arrived from `source`.
    mutating func receive(_ message: WireMessage, from source: PeerAddress, now: MonotonicTime) -> Effects {
        let time = Self.time(now)
        switch message {
        case .syncRequest(let request):
            var effects = Effects()
            effects.sends.append(Send(packet: .message(.syncResponse(machine.syncResponse(to: request))), to: source, reliable: true))
            return effects
        case .syncResponse(let response):
            guard let (pull, asked) = pulls[source] else { return Effects() }
            // Signatures are checked as the node's pull loop checks them, after the screen.
            let valid = machine.screen(response.events, now: time).filter(\.hasValidSignature)
            let next = machine.pulled(valid, for: pull, asked: asked, more: response.more, now: time)
            var effects = collect()
            if let next {
                pulls[source] = (pull, next)
                effects.sends.append(Send(packet: .message(.syncRequest(next)), to: source, reliable: true))
            } else {
                pulls[source] = nil
                machine.pullFinished(pull)
                let finished = collect()
                effects.sends += finished.sends
                effects.shown += finished.shown
                effects.changes += finished.changes
            }
            return effects
        default:
            var checks = UnlimitedChecks()
            machine.receive(message, from: source, now: time, checks: &checks)
            return collect()
        }
    }

    // MARK: Effects

    /// What the machine asked for, as the simulation carries it out.
    private mutating func collect() -> Effects {
        var effects = Effects()
        for effect in machine.pollEffects() {
            switch effect {
            case .send(let message, let addresses):
                for address in addresses { effects.sends.append(Send(packet: .message(message), to: address, reliable: false)) }
            case .pull(let pull):
                // One pull per peer at a time, as the node's pull loop runs them one by one.
                guard pulls[pull.address] == nil else { continue }
                let first = machine.firstSyncRequest(for: pull)
                pulls[pull.address] = (pull, first)
                effects.sends.append(Send(packet: .message(.syncRequest(first)), to: pull.address, reliable: true))
            case .datagram(let bytes, let address):
                // The machine makes only relay datagrams.
                guard let relay = try? RelayMessage(decoding: bytes) else { continue }
                effects.sends.append(Send(packet: .relay(relay, bytes: bytes), to: address, reliable: false))
            case .output(.room(.message(let shown), _)):
                effects.shown.append(shown.event.id)
            case .output(.room(.earlier(let items), _)):
                effects.shown += items.map(\.event.id)
            case .output(.peer(let id, _, let state, let left)):
                effects.changes.append((id, left ? .gone : state))
            case .persist(let write):
                // No disk: a write is committed as it is made.
                machine.committed([write])
            case .output, .advertise, .vouchedPeers, .askPassphrase, .quit, .listen, .hear:
                continue
            }
        }
        return effects
    }
}
