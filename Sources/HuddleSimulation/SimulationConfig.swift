public import HuddleCore

/// What ``Simulation`` runs: how many nodes, how the network behaves, what they say.
///
/// ```swift
/// var config = SimulationConfig(nodes: 25, seed: 1)
/// config.latencyMs = 100
/// config.loss = 0.2
/// config.stalls = .init(fraction: 0.05, seconds: 2, every: 10)   // 5 % of nodes freeze now and then
/// config.kill = .init(node: 0, at: 30)                             // node 0 dies 30 s in
/// ```
public struct SimulationConfig: Hashable, Sendable {
    /// Nodes, all in one room, all known to each other from the start (as mDNS would have it).
    public var nodes: Int
    /// One-way delay of every link, ms.
    public var latencyMs: Int
    /// Chance that any one datagram is lost, 0...1 (TCP segments are retransmitted instead).
    public var loss: Double
    /// Chat messages to send, each from a random node.
    public var broadcasts: Int
    /// Broadcasts per second, over the whole room.
    public var rate: Double
    /// Seeds every random choice: the same config gives the same run, message for message.
    public var seed: UInt64
    /// A partition: the first `nodes` nodes are cut off from the rest from `at` s after the
    /// first broadcast for `seconds` s.
    public var partition: Partition?
    /// Virtual seconds before the first broadcast, for membership to settle.
    public var warmupSeconds: Double
    /// Virtual seconds after the last broadcast to wait for the stragglers.
    public var drainSeconds: Double
    /// Nodes that freeze now and then (a stopped process, a starved CPU), if any.
    public var stalls: Stalls?
    /// A node that dies for good, if any.
    public var kill: Kill?
    /// Virtual seconds the run lasts at least, counted from the end of the warm-up (for
    /// membership runs: false alarms per node-hour need hours).
    public var minimumSeconds: Double
    /// How the nodes' membership is timed.
    public var membership: MembershipConfig
    /// The fraction of pairs of nodes that cannot reach each other at all, both ways (strict NATs
    /// between homes), chosen at random from the seed: they talk through common peers (relays).
    public var unreachable: Double = 0
    /// How long a write takes to land on a node's disk, ms (0: at once). What waits for a commit
    /// (a node's own message going out, a message shown) waits this long (``CommitGate``).
    public var commitLatencyMs: Int = 0
    /// Nodes killed (as `kill -9`) and started again at random moments, if any.
    public var crashes: Crashes?

    /// `count` crashes at moments drawn uniformly over the broadcasts, each of a node drawn at
    /// random (never the one ``kill`` kills): what had not landed on its disk is lost, and it
    /// starts again from the disk `restartSeconds` later, reading nothing meanwhile.
    /// With `powerCuts`, each crash is a power cut instead: the disk keeps only what was synced
    /// (a transaction with a lease of seqs, ``SeqLease``), not every commit, and the node starts
    /// again on a new boot.
    public struct Crashes: Hashable, Sendable {
        public var count: Int
        public var restartSeconds: Double
        public var powerCuts: Bool

        public init(count: Int, restartSeconds: Double = 1, powerCuts: Bool = false) {
            self.count = count
            self.restartSeconds = restartSeconds
            self.powerCuts = powerCuts
        }
    }

    /// Whether the nodes run plain SWIM (``MembershipConfig/swim``) instead of the defaults.
    public var swim: Bool {
        get { membership == .swim }
        set { membership = newValue ? .swim : MembershipConfig() }
    }

    /// A fraction of the nodes that freeze for `seconds` at random: each of them, after a pause
    /// drawn uniformly from 0 to 2 × `every` s (so one freeze every `every` s on average), stops
    /// for `seconds`: it reads nothing and wakes for nothing. What was sent to it waits (in its
    /// socket's buffer) and is read when it thaws, with its own timers, late.
    public struct Stalls: Hashable, Sendable {
        public var fraction: Double
        public var seconds: Double
        public var every: Double

        public init(fraction: Double, seconds: Double, every: Double) {
            self.fraction = fraction
            self.seconds = seconds
            self.every = every
        }
    }

    /// Node `node` dies `at` s after the warm-up: it reads and sends nothing from then on.
    public struct Kill: Hashable, Sendable {
        public var node: Int
        public var at: Double

        public init(node: Int, at: Double) {
            self.node = node
            self.at = at
        }
    }

    /// A cut between two groups of nodes.
    public struct Partition: Hashable, Sendable {
        public var nodes: Int
        public var at: Double
        public var seconds: Double

        public init(nodes: Int, at: Double, seconds: Double) {
            self.nodes = nodes
            self.at = at
            self.seconds = seconds
        }
    }

    public init(
        nodes: Int = 25, latencyMs: Int = 100, loss: Double = 0, broadcasts: Int = 200, rate: Double = 10,
        seed: UInt64 = 1, partition: Partition? = nil, warmupSeconds: Double = 5, drainSeconds: Double = 30,
        stalls: Stalls? = nil, kill: Kill? = nil, minimumSeconds: Double = 0, membership: MembershipConfig = .init()
    ) {
        self.nodes = nodes
        self.latencyMs = latencyMs
        self.loss = loss
        self.broadcasts = broadcasts
        self.rate = rate
        self.seed = seed
        self.partition = partition
        self.warmupSeconds = warmupSeconds
        self.drainSeconds = drainSeconds
        self.stalls = stalls
        self.kill = kill
        self.minimumSeconds = minimumSeconds
        self.membership = membership
    }
}
