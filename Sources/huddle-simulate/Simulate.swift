import ArgumentParser
import HuddleSimulation

/// `huddle-simulate`: N nodes' state machines over a simulated network, in virtual time.
@main
struct Simulate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "huddle-simulate",
        abstract: "Run N Huddle nodes' state machines over a simulated network and print the figures.",
        discussion: """
            The nodes run the same membership, replication and room state machines as huddle run, \
            in virtual time: a run of minutes takes seconds, and the same seed replays the same run, \
            message for message (trace_sha256 in --json). Every datagram is lost with --loss; \
            TCP pulls are retransmitted instead. Each figure is printed beside its target.

            Scripts/simulate --nodes 25 --latency-ms 100 --loss 0.2 --broadcasts 200 --rate 10 --seed 1 --json

            Membership under faults: 5 % of the nodes freeze for 2 s now and then, node 0 dies 60 s in, \
            and the run lasts 10 virtual minutes; false alarms and the time to report the death are \
            printed (--swim: the plain SWIM membership of before, for comparison):

            Scripts/simulate --stall-fraction 0.05 --stall-seconds 2 --stall-every 10 --kill-node 0 --kill-at 60 \
              --seconds 600
            """)

    @Option(help: "Nodes in the room.") var nodes = 25
    @Option(name: .customLong("latency-ms"), help: "One-way delay of every link, ms.") var latencyMs = 100
    @Option(help: "Chance that a datagram is lost, 0 to 1.") var loss = 0.0
    @Option(help: "Chat messages to send, each from a random node.") var broadcasts = 200
    @Option(help: "Broadcasts per second.") var rate = 10.0
    @Option(help: "Seeds every random choice.") var seed: UInt64 = 1
    @Option(name: .customLong("partition-nodes"), help: "Cut this many nodes off from the rest...") var partitionNodes: Int?
    @Option(name: .customLong("partition-at"), help: "...this many seconds after the first broadcast...")
    var partitionAt = 5.0
    @Option(name: .customLong("partition-for"), help: "...for this many seconds.") var partitionFor = 30.0
    @Option(name: .customLong("stall-fraction"), help: "Fraction of the nodes that freeze now and then...")
    var stallFraction = 0.0
    @Option(name: .customLong("stall-seconds"), help: "...for this many seconds...") var stallSeconds = 2.0
    @Option(name: .customLong("stall-every"), help: "...once every this many seconds on average.") var stallEvery = 10.0
    @Option(name: .customLong("kill-node"), help: "Kill this node (0-based) for good...") var killNode: Int?
    @Option(name: .customLong("kill-at"), help: "...this many seconds after the warm-up.") var killAt = 30.0
    @Option(help: "Run at least this many virtual seconds after the warm-up.") var seconds = 0.0
    @Option(help: "Fraction of pairs of nodes that cannot reach each other at all, 0 to 1 (they talk through common peers).")
    var unreachable = 0.0
    @Option(name: .customLong("commit-latency-ms"), help: "How long a write takes to land on a node's disk, ms.")
    var commitLatencyMs = 0
    @Option(help: "Kill nodes at this many random moments (as kill -9: what had not landed on disk is lost)...")
    var crashes = 0
    @Option(name: .customLong("restart-after"), help: "...and start each again from its disk this many seconds later.")
    var restartAfter = 1.0
    @Flag(name: .customLong("power-cuts"), help: "...as power cuts: only what was synced (a lease of seqs) is left on disk.")
    var powerCuts = false
    @Flag(help: "Plain SWIM membership (no helpers, no local health, suspect after one period), to compare.")
    var swim = false
    @Flag(help: "Print one JSON object instead of text.") var json = false

    func validate() throws {
        guard nodes >= 2, nodes <= 1000 else { throw ValidationError("--nodes must be 2 to 1000") }
        guard latencyMs >= 0 else { throw ValidationError("--latency-ms cannot be negative") }
        guard (0...0.9).contains(loss) else { throw ValidationError("--loss must be between 0 and 0.9") }
        guard broadcasts >= 1 else { throw ValidationError("--broadcasts must be at least 1") }
        guard rate > 0, rate <= 10_000 else { throw ValidationError("--rate must be above 0 (at most 10000)") }
        guard (0...1).contains(stallFraction), stallSeconds > 0, stallEvery > 0 else {
            throw ValidationError("--stall-fraction must be 0 to 1, --stall-seconds and --stall-every above 0")
        }
        guard commitLatencyMs >= 0, crashes >= 0, restartAfter >= 0 else {
            throw ValidationError("--commit-latency-ms, --crashes and --restart-after cannot be negative")
        }
        if let killNode, !(0..<nodes).contains(killNode) { throw ValidationError("--kill-node must be 0 to \(nodes - 1)") }
        if let partitionNodes, !(1..<nodes).contains(partitionNodes) {
            throw ValidationError("--partition-nodes must be 1 to \(nodes - 1)")
        }
    }

    func run() {
        var config = SimulationConfig(
            nodes: nodes, latencyMs: latencyMs, loss: loss, broadcasts: broadcasts, rate: rate, seed: seed)
        config.unreachable = unreachable
        config.commitLatencyMs = commitLatencyMs
        if crashes > 0 { config.crashes = .init(count: crashes, restartSeconds: restartAfter, powerCuts: powerCuts) }
        if let partitionNodes {
            config.partition = .init(nodes: partitionNodes, at: partitionAt, seconds: partitionFor)
            config.drainSeconds = max(config.drainSeconds, partitionAt + partitionFor + 30)
        }
        if stallFraction > 0 { config.stalls = .init(fraction: stallFraction, seconds: stallSeconds, every: stallEvery) }
        if let killNode { config.kill = .init(node: killNode, at: killAt) }
        config.minimumSeconds = max(seconds, killNode == nil ? 0 : killAt + 20)
        config.swim = swim
        var simulation = Simulation(config: config)
        let report = simulation.run()
        print(json ? report.json : report.text)
    }
}
