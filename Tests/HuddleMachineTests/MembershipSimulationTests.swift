import Testing

@testable import HuddleCore

/// Five memberships talking through an in-memory network with random latency and loss, on a fake
/// clock advanced in 100 ms steps. Each node is given one seed (a chain), one node is cut off and
/// then let back in.
@Suite(.offThePool) struct MembershipSimulationTests {
    static let step = TimeSpan.milliseconds(100)

    /// A datagram on its way.
    struct InFlight {
        var deliverAt: MonotonicTime
        var order: Int
        var from: Int
        var to: Int
        var message: WireMessage
    }

    /// The nodes, the wire between them and the fake clock.
    struct Network {
        var nodes: [Membership]
        var addresses: [PeerAddress]
        var wakeAt: [MonotonicTime?]
        var inFlight: [InFlight] = []
        var now = MonotonicTime.start
        var cut: Set<Int> = []
        var random: SplitMix64
        var sentCount = 0
        /// Every state change each node reported, with when.
        var changes: [[(at: MonotonicTime, id: NodeID, from: PeerState?, to: PeerState)]]

        init(count: Int, seed: UInt64) {
            random = SplitMix64(seed: seed)
            addresses = (0..<count).map { PeerAddress(host: "192.0.2.\(11 + $0)", port: 7400) }
            nodes = (0..<count).map { index in
                var node = Membership(
                    me: NodeID.fixture(UInt8(index + 1)), nick: "n\(index)", port: 7400, incarnation: 1)
                node.rooms = ["superbowl"]
                return node
            }
            wakeAt = Array(repeating: .start, count: count)
            changes = Array(repeating: [], count: count)
            for index in 0..<count {
                // A chain: everyone knows only the node before it (the first knows the second).
                let seed = index == 0 ? 1 : index - 1
                nodes[index].addSeed(PeerAddress(host: addresses[seed].host, port: addresses[seed].port))
            }
        }

        func index(of address: PeerAddress) -> Int? { addresses.firstIndex(of: address) }

        mutating func apply(_ directives: [MembershipDirective], at node: Int) {
            for directive in directives {
                switch directive {
                case .send(let message, let address):
                    guard let target = index(of: address) else { continue }
                    sentCount += 1
                    // 2 % loss; 50 µs to 30 ms latency.
                    guard Double.random(in: 0..<1, using: &random) >= 0.02 else { continue }
                    let latency = TimeSpan.microseconds(Int64.random(in: 50...30_000, using: &random))
                    inFlight.append(
                        InFlight(deliverAt: now + latency, order: sentCount, from: node, to: target, message: message))
                case .peerChanged(let id, _, let from, let to):
                    changes[node].append((now, id, from, to))
                case .peerLeft(let id, _):
                    changes[node].append((now, id, nil, .gone))
                case .scheduleTick(let at):
                    wakeAt[node] = at
                case .forward(let message, let address):
                    apply([.send(message, to: address)], at: node)
                case .peerMoved, .peerProven:
                    break
                }
            }
        }

        /// One 100 ms step: deliver what has arrived, then run the ticks that are due.
        mutating func advance() {
            now += MembershipSimulationTests.step
            let arrived = inFlight
                .filter { $0.deliverAt <= now }
                .sorted { ($0.deliverAt, $0.order) < ($1.deliverAt, $1.order) }
            inFlight.removeAll { $0.deliverAt <= now }
            for datagram in arrived where !cut.contains(datagram.from) && !cut.contains(datagram.to) {
                let source = addresses[datagram.from]
                let directives: [MembershipDirective]
                switch datagram.message {
                case .probe(let probe): directives = nodes[datagram.to].receive(probe, from: source, now: now)
                case .ack(let ack): directives = nodes[datagram.to].receive(ack, from: source, now: now)
                case .probeRequest(let request): directives = nodes[datagram.to].receive(request, from: source, now: now)
                case .nack(let nack): directives = nodes[datagram.to].receive(nack, from: source, now: now)
                default: directives = []
                }
                apply(directives, at: datagram.to)
            }
            for node in nodes.indices {
                if let wake = wakeAt[node], wake <= now {
                    apply(nodes[node].tick(now: now), at: node)
                }
            }
        }

        mutating func run(for duration: TimeSpan) {
            let end = now + duration
            while now < end { advance() }
        }

        /// How `observer` currently sees every other node.
        func view(of observer: Int) -> [NodeID: PeerState] {
            nodes[observer].peers.mapValues(\.state)
        }

        func id(_ node: Int) -> NodeID { nodes[node].me }
    }

    @Test(arguments: [1, 2, 3, 42] as [UInt64])
    func everyoneFindsEveryoneNoticesADeathAndAReturn(seed: UInt64) {
        var network = Network(count: 5, seed: seed)
        let everyone = Set(network.nodes.indices)

        // Convergence from one seed each.
        network.run(for: .seconds(5))
        for node in everyone {
            let others = Dictionary(
                uniqueKeysWithValues: everyone.subtracting([node]).map { (network.id($0), PeerState.alive) })
            #expect(network.view(of: node) == others, "node \(node) at \(network.now)")
            #expect(network.nodes[node].seeds == [])
            #expect(network.nodes[node].alivePeers(inRoom: "superbowl").count == 4)
            for peer in network.nodes[node].peers.values {
                #expect(peer.rtt != nil)
            }
        }

        // Node 2 is cut off: everyone else reports it gone within 10 s, exactly once.
        let victim = 2
        let killedAt = network.now
        network.cut = [victim]
        network.run(for: .seconds(10))
        for node in everyone.subtracting([victim]) {
            #expect(network.view(of: node)[network.id(victim)] == .gone, "node \(node)")
            let reports = network.changes[node].filter { $0.id == network.id(victim) && $0.to == .gone }
            #expect(reports.count == 1)
            #expect(reports.allSatisfy { $0.at - killedAt <= .seconds(10) })
            for other in everyone.subtracting([victim, node]) {
                #expect(network.view(of: node)[network.id(other)] == .alive, "node \(node) about \(other)")
            }
        }
        // The cut-off node gives everyone up too, unless it heard no helper it knew to answer: then
        // it takes itself for the slow one (Lifeguard's local health) and stretches its own timing.
        #expect(network.view(of: victim).values.allSatisfy { $0 == .gone } || network.nodes[victim].health > 0)

        // Back on the network: everyone sees everyone alive again.
        let revivedAt = network.now
        network.cut = []
        network.run(for: .seconds(10))
        for node in everyone {
            #expect(network.view(of: node).values.allSatisfy { $0 == .alive }, "node \(node)")
            #expect(network.view(of: node).count == 4)
        }
        for node in everyone.subtracting([victim]) {
            let back = network.changes[node].filter { $0.id == network.id(victim) && $0.at > revivedAt }
            #expect(back.map(\.to) == [.alive])
        }
    }
}
