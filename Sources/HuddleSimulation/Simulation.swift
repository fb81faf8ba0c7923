import Crypto
import HuddleCore

/// N nodes' state machines in virtual time over a simulated network: per-link latency, random
/// datagram loss, an optional partition. Deterministic: the same ``SimulationConfig`` (seed
/// included) gives the same run, message for message, on any machine.
///
/// ```swift
/// let report = Simulation(config: SimulationConfig(nodes: 25, loss: 0.2, seed: 1)).run()
/// report.deliveredFraction   // 1.0
/// report.p99Ms               // origin → shown on each other node
/// ```
///
/// What is modelled: UDP datagrams are delivered after the link latency or lost (independently,
/// with `loss`); messages of a TCP pull are never lost but each loss costs a retransmission
/// timeout (1 s for the connection's first segment, as a SYN, then 200 ms doubling), as TCP does.
/// Every node knows every other from the start (as mDNS gives it), joins the room, and after the
/// warm-up the broadcasts start, each from a random node. Not modelled: CPU time (handling is
/// instant), bandwidth, reordering beyond what loss and retransmission cause, signatures' cost.
///
/// Faults for membership: nodes that freeze now and then (``SimulationConfig/stalls``) and one
/// that dies (``SimulationConfig/kill``). Every "suspect" or "gone" a node reports about a node
/// that is up (frozen or not) is a false alarm; the report counts them and how long each live node
/// took to report the dead one gone.
public struct Simulation {
    public let config: SimulationConfig
    private var nodes: [SimulatedNode] = []
    private var byAddress: [PeerAddress: Int] = [:]
    private var queue = EventQueue<Action>()
    private var random: SplitMix64
    /// When each node's tick is queued for (so a tick is queued once per time).
    private var tickQueuedAt: [MonotonicTime?]
    private var report = Collector()
    private var trace = SHA256()
    private static let room = "sim"

    private enum Action {
        case deliver(SimulatedNode.Packet, from: Int, to: Int)
        case tick(Int)
        case broadcast(Int)
        case stall(Int)
        case kill(Int)
        /// Node `index`'s oldest writes land on its disk, if it still runs `run`.
        case land(Int, run: Int)
        case crash(Int)
        case restart(Int)
        /// Node `index`'s pull from `address` fails (a connection that does not open), if it
        /// still runs `run`.
        case pullFailed(Int, to: PeerAddress, run: Int)
    }

    /// How long a node's pull client waits for a connection that does not open.
    private static let connectTimeout = TimeSpan.seconds(2)
    /// Until when each node is frozen.
    private var frozenUntil: [MonotonicTime]
    /// Nodes that died.
    private var dead: Set<Int> = []
    /// Nodes that crashed and have not started again yet.
    private var down: Set<Int> = []
    /// Pairs of nodes that cannot reach each other (``SimulationConfig/unreachable``).
    private var blocked: Set<Pair> = []

    /// An unordered pair of nodes.
    private struct Pair: Hashable {
        let low: Int
        let high: Int
        init(_ a: Int, _ b: Int) { (low, high) = (min(a, b), max(a, b)) }
    }

    public init(config: SimulationConfig) {
        precondition(config.nodes >= 2, "a simulation needs two nodes")
        self.config = config
        random = SplitMix64(seed: config.seed)
        tickQueuedAt = Array(repeating: nil, count: config.nodes)
        frozenUntil = Array(repeating: .start, count: config.nodes)
    }

    /// Runs to the end and reports.
    public mutating func run() -> SimulationReport {
        // Seconds from the configuration, to whole µs toward zero (so runs repeat as they always did).
        let start = MonotonicTime.start + .seconds(config.warmupSeconds, rounded: .towardZero)
        let interval = TimeSpan.microseconds(Int64(1_000_000 / config.rate))
        for index in 0..<config.nodes {
            var seed = [UInt8](repeating: 0, count: 32)
            withUnsafeBytes(of: (config.seed &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(index)).bigEndian) {
                seed.replaceSubrange(0..<8, with: $0)
            }
            seed[8] = UInt8(index & 0xff)
            seed[9] = UInt8(index >> 8)
            let identity = try! NodeIdentity(privateKeyBytes: seed)
            nodes.append(
                SimulatedNode(
                    index: index, identity: identity, room: Self.room, seed: random.next(),
                    membership: config.membership))
            nodes[index].commitsAtOnce = config.commitLatencyMs == 0
            byAddress[nodes[index].address] = index
        }
        if config.unreachable > 0 {
            for a in nodes.indices {
                for b in nodes.indices where b > a && Double(random.next() >> 11) / Double(UInt64(1) << 53) < config.unreachable {
                    blocked.insert(Pair(a, b))
                }
            }
        }
        report.blockedPairs = blocked.count
        for index in nodes.indices {
            for other in nodes.indices where other != index {
                let found = nodes[other]
                apply(nodes[index].discovered(found, now: .start), from: index, now: .start)
            }
            apply(nodes[index].start(now: .start), from: index, now: .start)
        }
        for broadcast in 0..<config.broadcasts {
            queue.push(.broadcast(broadcast), at: start + Int64(broadcast) * interval)
        }
        let lastBroadcast = start + Int64(max(0, config.broadcasts - 1)) * interval
        let minimumEnd = start + .seconds(config.minimumSeconds, rounded: .towardZero)
        let end = max(lastBroadcast + .seconds(config.drainSeconds, rounded: .towardZero), minimumEnd)
        report.healAt = config.partition.map { start + .seconds($0.at + $0.seconds, rounded: .towardZero) }
        report.faultsFrom = start
        scheduleFaults(start: start)

        while let (now, action) = queue.pop(), now <= end {
            report.now = now
            switch action {
            case .broadcast(let number):
                // From a node that is up and not frozen (with every node down, nobody writes).
                let candidates = nodes.indices.filter { !dead.contains($0) && !down.contains($0) && frozenUntil[$0] <= now }
                guard !candidates.isEmpty else { continue }
                let origin = candidates[Int(random.next() % UInt64(candidates.count))]
                let (made, effects) = nodes[origin].say("broadcast \(number)", now: now)
                guard let event = made else { continue }
                report.made(event, by: origin, at: now)
                report.expected += config.nodes - 1 - dead.count
                report.counting = true
                apply(effects, from: origin, now: now)
            case .tick(let index):
                guard tickQueuedAt[index] == now, !dead.contains(index), !down.contains(index) else { continue }
                if frozenUntil[index] > now {
                    tickQueuedAt[index] = frozenUntil[index]
                    queue.push(.tick(index), at: frozenUntil[index])
                    continue
                }
                tickQueuedAt[index] = nil
                apply(nodes[index].tick(now: now), from: index, now: now)
            case .deliver(let packet, let from, let to):
                guard !dead.contains(to), !down.contains(to) else {
                    failPull(packet, from: from, to: nodes[to].address, now: now)
                    continue
                }
                if frozenUntil[to] > now {
                    // Waits in the frozen node's socket buffer.
                    queue.push(.deliver(packet, from: from, to: to), at: frozenUntil[to])
                    continue
                }
                trace.update(data: Array("\(now.microseconds) \(from)>\(to) \(packet.kind)\n".utf8))
                apply(nodes[to].receive(packet, from: nodes[from].address, now: now), from: to, now: now)
            case .stall(let index):
                guard !dead.contains(index), let stalls = config.stalls else { continue }
                frozenUntil[index] = now + .seconds(stalls.seconds, rounded: .towardZero)
                report.stalls += 1
                queue.push(.stall(index), at: frozenUntil[index] + pause(stalls))
            case .kill(let index):
                dead.insert(index)
                report.died(index, at: now)
            case .land(let index, let run):
                guard nodes[index].runs == run, !down.contains(index) else { continue }
                apply(nodes[index].landed(now: now), from: index, now: now)
            case .crash(let index):
                guard !dead.contains(index), !down.contains(index), let crashes = config.crashes else { continue }
                down.insert(index)
                report.crashes += 1
                queue.push(.restart(index), at: now + .seconds(crashes.restartSeconds, rounded: .towardZero))
            case .pullFailed(let index, let address, let run):
                guard nodes[index].runs == run, !dead.contains(index), !down.contains(index) else { continue }
                apply(nodes[index].pullFailed(to: address, now: now), from: index, now: now)
            case .restart(let index):
                down.remove(index)
                let powerCut = config.crashes?.powerCuts ?? false
                let (lost, effects) = nodes[index].restart(now: now, others: nodes, powerCut: powerCut)
                report.neverSaid(lost, nodes: config.nodes - 1 - dead.count, mayHaveLeft: powerCut)
                tickQueuedAt[index] = nil
                apply(effects, from: index, now: now)
            }
            if report.sent.count == config.broadcasts, report.delivered == report.expected, now >= minimumEnd {
                break
            }
        }
        return report.finish(config: config, trace: trace.finalize())
    }

    // MARK: Pieces

    /// Queues the first freeze of each freezing node (chosen at random, never the one to die) and
    /// the death.
    private mutating func scheduleFaults(start: MonotonicTime) {
        if let kill = config.kill, nodes.indices.contains(kill.node) {
            queue.push(.kill(kill.node), at: start + .seconds(kill.at, rounded: .towardZero))
        }
        if let crashes = config.crashes {
            let span = Double(max(1, config.broadcasts)) / config.rate
            let candidates = nodes.indices.filter { $0 != config.kill?.node }
            for _ in 0..<crashes.count {
                let node = candidates[Int(random.next() % UInt64(candidates.count))]
                let unit = Double(random.next() >> 11) / Double(UInt64(1) << 53)
                queue.push(.crash(node), at: start + .seconds(unit * span, rounded: .towardZero))
            }
        }
        guard let stalls = config.stalls, stalls.fraction > 0, stalls.seconds > 0 else { return }
        var candidates = nodes.indices.filter { $0 != config.kill?.node }
        candidates.shuffle(using: &random)
        let count = min(candidates.count, Int((stalls.fraction * Double(config.nodes)).rounded(.up)))
        for index in candidates.prefix(count).sorted() {
            queue.push(.stall(index), at: start + pause(stalls))
        }
        report.stallingNodes = count
    }

    /// The time to a freezing node's next freeze: uniform over 0 ... 2 × `every` s.
    private mutating func pause(_ stalls: SimulationConfig.Stalls) -> TimeSpan {
        let unit = Double(random.next() >> 11) / Double(UInt64(1) << 53)
        let seconds: Double = unit * 2 * stalls.every
        return .seconds(seconds, rounded: .towardZero)
    }

    /// Sends what a node wants sent, records what it showed, queues its next tick.
    /// A packet that cannot reach `address`: if it is a pull's request, the connection never
    /// opens, and the node's client gives up after its connect timeout.
    private mutating func failPull(_ packet: SimulatedNode.Packet, from index: Int, to address: PeerAddress, now: MonotonicTime) {
        guard case .message(.syncRequest) = packet else { return }
        queue.push(.pullFailed(index, to: address, run: nodes[index].runs), at: now + Self.connectTimeout)
    }

    private mutating func apply(_ effects: SimulatedNode.Effects, from index: Int, now: MonotonicTime) {
        for id in effects.shown { report.shown(id, on: index, at: now) }
        report.faults += effects.faults
        for _ in 0..<effects.handedToDisk {
            queue.push(.land(index, run: nodes[index].runs), at: now + .milliseconds(config.commitLatencyMs))
        }
        for change in effects.changes {
            guard let about = nodes.firstIndex(where: { $0.identity.id == change.id }) else { continue }
            report.changed(about, to: change.to, on: index, at: now)
        }
        for send in effects.sends {
            guard let to = byAddress[send.to] else { continue }
            if report.counting {
                report.messages += 1
                report.byKind[send.packet.kind, default: 0] += 1
            }
            guard let delay = delay(from: index, to: to, reliable: send.reliable, now: now) else {
                failPull(send.packet, from: index, to: send.to, now: now)
                continue
            }
            queue.push(.deliver(send.packet, from: index, to: to), at: now + delay)
        }
        let next = nodes[index].nextTick(now: now)
        if tickQueuedAt[index].map({ next < $0 }) ?? true {
            tickQueuedAt[index] = next
            queue.push(.tick(index), at: max(next, now))
        }
    }

    /// How long a message takes from one node to another, or `nil` if it is lost.
    private mutating func delay(from: Int, to: Int, reliable: Bool, now: MonotonicTime) -> TimeSpan? {
        // A pair that cannot reach each other: not even TCP gets through.
        if blocked.contains(Pair(from, to)) { return nil }
        let latency = TimeSpan.milliseconds(config.latencyMs)
        if let cutUntil = partitionEnd(between: from, and: to, at: now) {
            // A TCP message waits out the partition (retransmitting); a datagram is lost.
            return reliable ? cutUntil - now + latency : nil
        }
        guard reliable else { return lost() ? nil : latency }
        var delay = latency
        var timeout = TimeSpan.seconds(1)
        while lost() {
            delay += timeout
            timeout = min(timeout * 2, .seconds(8))
        }
        return delay
    }

    private mutating func lost() -> Bool {
        config.loss > 0 && Double(random.next() >> 11) / Double(1 << 53) < config.loss
    }

    /// When the partition between two nodes ends, if they are cut off from each other now.
    private func partitionEnd(between a: Int, and b: Int, at now: MonotonicTime) -> MonotonicTime? {
        guard let partition = config.partition else { return nil }
        let start = MonotonicTime.start + .seconds(config.warmupSeconds, rounded: .towardZero)
            + .seconds(partition.at, rounded: .towardZero)
        let end = start + .seconds(partition.seconds, rounded: .towardZero)
        guard now >= start, now < end, (a < partition.nodes) != (b < partition.nodes) else { return nil }
        return end
    }
}

/// Tallies a run as it goes.
private struct Collector {
    var now = MonotonicTime.start
    var sent: [EventID: (origin: Int, at: MonotonicTime)] = [:]
    var expected = 0
    var delivered = 0
    var duplicates = 0
    var latencies: [TimeSpan] = []
    /// Messages are counted from the first broadcast on.
    var counting = false
    var messages = 0
    var byKind: [String: Int] = [:]
    var seen: Set<Pair> = []
    var healAt: MonotonicTime?
    var lastDelivery = MonotonicTime.start
    /// Membership faults: from when state changes count, the dead node and when it died, how
    /// many freezes, what each node reported.
    var faultsFrom = MonotonicTime.start
    var victim: (node: Int, at: MonotonicTime)?
    var stalls = 0
    var stallingNodes = 0
    var falseAlarms: [SimulationReport.Alarm] = []
    var blockedPairs = 0
    var goneReported: [Int: TimeSpan] = [:]
    /// Crashes so far; events lost in one before they landed (nobody may show them); those shown
    /// anyway; proofs of equivocation found; each origin's events by seq, and seqs made twice.
    var crashes = 0
    var lost: Set<EventID> = []
    var lostShown = 0
    var faults = 0
    var made: [EventID: [UInt8]] = [:]
    var seqsReused = 0

    /// What was said, when and by whom, in order, and what each node showed of it, in order: the
    /// run as a script another driver can replay (``SimulationReport/script``).
    var script: [(at: MonotonicTime, origin: Int, text: String)] = []
    var texts: [EventID: String] = [:]
    var shownInOrder: [Int: [String]] = [:]

    /// Node `origin` made `event`, a broadcast, at `now`. Its seq was used before only if a crash
    /// lost that event before it landed (``neverSaid(_:nodes:)`` forgets those): otherwise the
    /// restarted node signed a seq twice.
    mutating func made(_ event: Event, by origin: Int, at now: MonotonicTime) {
        sent[event.id] = (origin, now)
        if case .chat(let text) = event.body {
            texts[event.id] = text
            script.append((now, origin, text))
        }
        if let earlier = made.updateValue(event.signature, forKey: event.id), earlier != event.signature {
            seqsReused += 1
        }
        // A seq a crash lost is free again: from now on it names this event (were the lost one
        // ever seen too, its peers would find the two and prove an equivocation).
        lost.remove(event.id)
    }

    /// A crash lost these events, made but not on disk: they were never said, so nobody owes them.
    /// After a power cut (`mayHaveLeft`) they may have been sent: their seqs are not free again,
    /// and some nodes may show them (``lostShown``, not a fault then).
    mutating func neverSaid(_ ids: [EventID], nodes: Int, mayHaveLeft: Bool = false) {
        for id in ids where sent.removeValue(forKey: id) != nil {
            lost.insert(id)
            if !mayHaveLeft { made[id] = nil }
            expected -= nodes
            expected += seen.filter { $0.id == id }.count
        }
    }

    /// Node `node` died at `now`: what it had not shown yet is no longer expected of it.
    mutating func died(_ node: Int, at now: MonotonicTime) {
        victim = (node, now)
        let owed = sent.values.filter { $0.origin != node }.count
        let shownThere = seen.filter { $0.node == node }.count
        expected -= owed - shownThere
    }

    /// Node `observer` reported node `about` as `state` at `now`.
    mutating func changed(_ about: Int, to state: PeerState, on observer: Int, at now: MonotonicTime) {
        guard now >= faultsFrom, state != .alive else { return }
        if let victim, victim.node == about {
            if state == .gone, goneReported[observer] == nil { goneReported[observer] = now - victim.at }
            return
        }
        falseAlarms.append(
            SimulationReport.Alarm(
                observer: observer, about: about, state: state, atMs: now.sinceStart.fractionalMilliseconds))
    }

    struct Pair: Hashable {
        var id: EventID
        var node: Int
    }

    mutating func shown(_ id: EventID, on node: Int, at now: MonotonicTime) {
        if lost.contains(id) { lostShown += 1 }
        if let text = texts[id] { shownInOrder[node, default: []].append(text) }
        guard let (origin, sentAt) = sent[id], origin != node, victim?.node != node else { return }
        guard seen.insert(Pair(id: id, node: node)).inserted else {
            duplicates += 1
            return
        }
        delivered += 1
        latencies.append(now - sentAt)
        lastDelivery = max(lastDelivery, now)
    }

    func finish(config: SimulationConfig, trace: SHA256.Digest) -> SimulationReport {
        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let rank = max(1, Int((p / 100 * Double(sorted.count)).rounded(.up)))
            return sorted[rank - 1].fractionalMilliseconds
        }
        var report = SimulationReport(
            config: config,
            deliveredFraction: expected == 0 ? 1 : Double(delivered) / Double(expected),
            messagesPerBroadcast: config.broadcasts == 0 ? 0 : Double(messages) / Double(config.broadcasts),
            p50Ms: percentile(50), p99Ms: percentile(99), maxMs: (sorted.last ?? .zero).fractionalMilliseconds,
            duplicatesShown: duplicates,
            messagesByKind: byKind,
            allDeliveredAfterHealMs: healAt.flatMap { heal in
                delivered == expected ? max(.zero, lastDelivery - heal).fractionalMilliseconds : nil
            },
            virtualSeconds: (now - faultsFrom).seconds,
            stallingNodes: stallingNodes, stalls: stalls, falseAlarms: falseAlarms,
            killDetectionMs: victim.map { victim in
                (0..<config.nodes).filter { $0 != victim.node }.map { goneReported[$0]?.fractionalMilliseconds }
            },
            trace: trace.map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }.joined())
        report.unreachablePairs = blockedPairs
        report.crashes = crashes
        report.lostShown = lostShown
        report.equivocations = faults
        report.seqsReused = seqsReused
        report.script = script
        report.shownInOrder = shownInOrder
        return report
    }
}
