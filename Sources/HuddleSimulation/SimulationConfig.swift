/// What ``Simulation`` runs: how many nodes, how the network behaves, what they say.
///
/// ```swift
/// var config = SimulationConfig(nodes: 25, seed: 1)
/// config.latencyMs = 100
/// config.loss = 0.2
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
        seed: UInt64 = 1, partition: Partition? = nil, warmupSeconds: Double = 5, drainSeconds: Double = 30
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
    }
}
